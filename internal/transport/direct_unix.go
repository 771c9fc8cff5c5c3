//go:build unix

package transport

import (
	"errors"
	"net"
	"syscall"
)

// directWriter writes to a TCP socket without waiting for room in its
// buffer, so that a caller can write its own frame and never block on a
// slow peer (Go's sockets are non-blocking; net.Conn.Write would park).
// Only the owner of the write side uses it.
type directWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // w.do, bound once so that writes do not allocate
	buf []byte
	n   int
	err error
}

func newDirectWriter(nc net.Conn) *directWriter {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil // TLS or a custom dialer's conn: the writer goroutine does it all
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &directWriter{rc: rc}
	w.fn = w.do
	return w
}

func (w *directWriter) do(fd uintptr) bool {
	w.n, w.err = syscall.Write(int(fd), w.buf)
	return true // one attempt: a full buffer is the writer goroutine's business
}

// write makes one write attempt and returns how much of buf went out; a
// full socket buffer is not an error.
func (w *directWriter) write(buf []byte) (int, error) {
	w.buf = buf
	err := w.rc.Write(w.fn)
	n, werr := w.n, w.err
	w.buf, w.err = nil, nil
	if err != nil {
		return 0, err
	}
	if werr != nil {
		if errors.Is(werr, syscall.EAGAIN) || errors.Is(werr, syscall.EINTR) {
			return 0, nil
		}
		return 0, werr
	}
	return max(n, 0), nil
}
