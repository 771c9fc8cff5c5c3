//go:build !unix

package server

import (
	"errors"
	"net"
)

const tlsSupported = false

var errNoTLS = errors.New("rocketmq: TLS is not supported by the server on this system")

func peekByte(net.Conn) (byte, error) { return 0, errNoTLS }

func socketPair() (net.Conn, net.Conn, error) { return nil, nil, errNoTLS }
