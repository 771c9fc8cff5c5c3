package server

import "syscall"

// setRcvLowat sets SO_RCVLOWAT, which epoll honours for TCP on Linux.
func setRcvLowat(fd, n int) error {
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
}
