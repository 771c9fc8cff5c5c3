package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/go-rocketmq/rocketmq/internal/atomicfile"
)

// WriteConfigFile replaces path atomically and durably (atomicfile): the
// current file, if it is well formed, becomes path.bak before the new one
// is renamed over it. The broker owns the content (JSON).
func WriteConfigFile(path string, data []byte) error {
	if err := atomicfile.WriteKeepingBackup(path, data, 0o644, wellFormed); err != nil {
		return fmt.Errorf("%w: %v", ErrIO, err)
	}
	return nil
}

// ReadConfigFile reads path, or path.bak when path is missing, empty or not
// well formed (a JSON-like document with balanced brackets; Java's unquoted
// integer keys are accepted). Neither file present: an error matching
// fs.ErrNotExist; both unusable: ErrCorrupt.
func ReadConfigFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && wellFormed(b) {
		return b, nil
	}
	mainErr := err
	bak, berr := os.ReadFile(path + ".bak")
	if berr == nil && wellFormed(bak) {
		return bak, nil
	}
	if errors.Is(mainErr, fs.ErrNotExist) && errors.Is(berr, fs.ErrNotExist) {
		return nil, fmt.Errorf("rocketmq: store: config file %s: %w", path, fs.ErrNotExist)
	}
	if mainErr != nil && !errors.Is(mainErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: read %s: %v", ErrIO, path, mainErr)
	}
	return nil, fmt.Errorf("%w: config file %s and its .bak are unusable", ErrCorrupt, path)
}

// wellFormed is a structural check: one object or array, brackets balanced
// outside strings, nothing but space after it.
func wellFormed(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || (b[0] != '{' && b[0] != '[') {
		return false
	}
	var stack []byte
	inStr, esc := false, false
	for i, c := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i == len(b)-1
			}
		}
	}
	return false
}
