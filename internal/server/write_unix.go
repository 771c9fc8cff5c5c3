//go:build unix

package server

import (
	"errors"
	"syscall"
)

// writeDirect writes buf to the socket from the calling goroutine. It
// returns how much the socket took; fewer bytes than len(buf) with a nil
// error means the socket buffer is full.
func (c *Conn) writeDirect(buf []byte) (int, error) {
	c.fdMu.Lock()
	defer c.fdMu.Unlock()
	if c.fdDone {
		return 0, ErrConnClosed
	}
	done := 0
	for done < len(buf) {
		n, err := syscall.Write(c.fd, buf[done:])
		if n > 0 {
			done += n
		}
		switch {
		case err == nil:
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN):
			return done, nil
		default:
			return done, err
		}
	}
	return done, nil
}
