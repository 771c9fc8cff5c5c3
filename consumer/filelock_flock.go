//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package consumer

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path (created if needed)
// for as long as the process holds it; the system drops it when the
// process dies. errLocked: another holder has it.
func lockFile(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
