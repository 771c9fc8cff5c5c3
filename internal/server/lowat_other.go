//go:build !linux

package server

import "errors"

// setRcvLowat is only used on Linux, where epoll honours SO_RCVLOWAT.
func setRcvLowat(int, int) error { return errors.ErrUnsupported }
