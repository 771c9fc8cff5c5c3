package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// created remembers which of some directories a start is about to make,
// so that a start that fails leaves no store behind where there was none.
type created struct{ tops []string }

// willCreate records, for each dir, its outermost ancestor (or itself)
// that does not exist yet; directories that exist are not recorded.
func willCreate(dirs ...string) *created {
	c := new(created)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		top := ""
		for p := abs; ; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				break
			}
			top = p
			if filepath.Dir(p) == p {
				break
			}
		}
		if top != "" {
			c.tops = append(c.tops, top)
		}
	}
	return c
}

// remove deletes what was recorded, joining the errors.
func (c *created) remove() error {
	var errs []error
	for _, d := range c.tops {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
