//go:build unix

package server

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

const tlsSupported = true

// peekByte waits, within nc's read deadline, for the first byte and reads
// it without consuming it (MSG_PEEK), so a plain connection reaches gnet
// untouched.
func peekByte(nc net.Conn) (byte, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, errors.New("rocketmq: connection has no descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		b    [1]byte
		n    int
		rerr error
	)
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
			if rerr != syscall.EINTR {
				return rerr != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return b[0], nil
}

// socketPair returns the two ends of a connected Unix stream socket pair.
func socketPair() (inner, outer net.Conn, err error) {
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	inner, err = fileConn(fds[0])
	if err != nil {
		_ = syscall.Close(fds[1])
		return nil, nil, err
	}
	outer, err = fileConn(fds[1])
	if err != nil {
		_ = inner.Close()
		return nil, nil, err
	}
	return inner, outer, nil
}

// fileConn wraps fd in a net.Conn (which takes a duplicate) and closes fd.
func fileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "tls-bridge")
	c, err := net.FileConn(f)
	_ = f.Close()
	return c, err
}
