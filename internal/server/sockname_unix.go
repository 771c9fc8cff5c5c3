//go:build unix

package server

import (
	"net"
	"syscall"
)

// localAddr asks the kernel for the connection's local address: gnet reports
// the listener's configured one, which may say port 0 or 0.0.0.0.
func localAddr(fd int, fallback net.Addr) net.Addr {
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fallback
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *syscall.SockaddrInet6:
		ta := &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
		if a.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				ta.Zone = ifi.Name
			}
		}
		return ta
	}
	return fallback
}
