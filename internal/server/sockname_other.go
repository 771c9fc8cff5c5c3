//go:build !unix

package server

import "net"

func localAddr(_ int, fallback net.Addr) net.Addr { return fallback }
