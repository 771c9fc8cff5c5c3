package mqclient

import (
	"crypto/rand"
	"encoding/binary"
	"net"
	"os"
	"strconv"
)

// BuildClientID returns ip@instance[@unit] (docs/PROTOCOL.md §8.1).
func BuildClientID(ip, instance, unit string) string {
	id := ip + "@" + instance
	if unit != "" {
		id += "@" + unit
	}
	return id
}

// DefaultInstanceName returns "<pid>#<random>": Java writes pid#nanoTime;
// a random number keeps two clients of one process apart just as well
// without reading a clock twice in the same tick.
func DefaultInstanceName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := binary.BigEndian.Uint64(b[:]) >> 1
	return strconv.Itoa(os.Getpid()) + "#" + strconv.FormatUint(n, 10)
}

// LocalIP returns the address Java's client ids use: the first
// non-loopback IPv4 address, preferring one outside 192.168/16 like
// RemotingUtil.getLocalAddress; 127.0.0.1 when there is none.
func LocalIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "127.0.0.1"
	}
	var fallback string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip4 := ipn.IP.To4()
		if ip4 == nil || ip4.IsLoopback() || ip4.IsUnspecified() || ip4.IsLinkLocalUnicast() {
			continue
		}
		if ip4[0] == 192 && ip4[1] == 168 {
			if fallback == "" {
				fallback = ip4.String()
			}
			continue
		}
		return ip4.String()
	}
	if fallback != "" {
		return fallback
	}
	return "127.0.0.1"
}
