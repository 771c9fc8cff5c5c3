package rocketmq

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// UniqIDGenerator makes client unique ids (UNIQ_KEY, docs/PROTOCOL.md §6.1) in
// the Java layout, so Java's decoders read them. It is safe for concurrent
// use; give each producer (or client instance) its own.
//
// Uniqueness: the time field and a 16-bit counter together tell ids of one
// generator apart. The counter wraps like Java's, so more than 65536 ids in
// one millisecond would repeat a (time, counter) pair. The generator keeps a
// logical clock instead of reading the wall clock blindly: it never goes
// back, and after 65536 ids on one millisecond it moves on to the next one,
// borrowing from the future until the wall clock catches up. Ids therefore
// stay unique within a month (the time field restarts every month, as in
// Java) and their time field is at most a few ms ahead under extreme load.
type UniqIDGenerator struct {
	now    func() time.Time
	loc    *time.Location
	prefix [44]byte // hex of ip | pid | hash
	plen   int

	mu      sync.Mutex
	counter uint16
	used    int   // ids issued on curMs
	curMs   int64 // logical epoch ms of the last id
	start   int64 // start of curMs's month, epoch ms
	next    int64 // start of the following month
}

// IDOption configures a UniqIDGenerator.
type IDOption func(*idConfig)

type idConfig struct {
	addr    netip.Addr
	pid     int
	hash    int32
	hashSet bool
	now     func() time.Time
}

// WithIDAddr sets the address written into ids. Default: LocalIDAddr().
func WithIDAddr(a netip.Addr) IDOption { return func(c *idConfig) { c.addr = a } }

// WithIDPID sets the pid whose low 16 bits go into ids. Default: os.Getpid().
func WithIDPID(pid int) IDOption { return func(c *idConfig) { c.pid = pid } }

// WithIDHash sets the 4-byte instance value (Java: the class loader's hash).
// Default: random per generator, so that two generators in one process
// never make the same id.
func WithIDHash(h int32) IDOption { return func(c *idConfig) { c.hash, c.hashSet = h, true } }

// WithIDClock sets the clock; its location decides where months start.
// Default: time.Now (local time, like the JVM's default zone).
func WithIDClock(now func() time.Time) IDOption { return func(c *idConfig) { c.now = now } }

// NewUniqIDGenerator returns a generator.
func NewUniqIDGenerator(opts ...IDOption) *UniqIDGenerator {
	c := idConfig{pid: os.Getpid(), now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	if !c.hashSet {
		c.hash = rand.Int32()
	}
	if !c.addr.IsValid() {
		c.addr = LocalIDAddr()
	}
	if !c.addr.IsValid() {
		c.addr = fakeIDAddr(c.now())
	}
	ip := c.addr.Unmap()
	var raw [22]byte
	n := 0
	if ip.Is4() {
		a := ip.As4()
		n = copy(raw[:], a[:])
	} else {
		a := ip.As16()
		n = copy(raw[:], a[:])
	}
	binary.BigEndian.PutUint16(raw[n:], uint16(c.pid))
	binary.BigEndian.PutUint32(raw[n+2:], uint32(c.hash))
	g := &UniqIDGenerator{now: c.now, loc: c.now().Location()}
	g.plen = len(appendHex(g.prefix[:0], raw[:n+6]))
	return g
}

// Prefix returns the fixed first part of this generator's ids (ip, pid and
// hash in hex).
func (g *UniqIDGenerator) Prefix() string { return string(g.prefix[:g.plen]) }

// NewID returns a new unique id: 32 hex characters with an IPv4 address,
// 56 with IPv6.
func (g *UniqIDGenerator) NewID() string {
	var buf [56]byte
	return string(g.AppendNewID(buf[:0]))
}

// AppendNewID appends a new unique id (see NewID) to dst, for callers that
// write ids into a buffer (a batch body) without a string per id.
func (g *UniqIDGenerator) AppendNewID(dst []byte) []byte {
	ms := g.now().UnixMilli()

	g.mu.Lock()
	switch {
	case ms > g.curMs:
		g.curMs, g.used = ms, 0
	case g.used >= 1<<16:
		g.curMs++
		g.used = 0
	}
	if g.curMs >= g.next || g.curMs < g.start {
		g.setMonth(g.curMs)
	}
	diff := uint32(g.curMs - g.start)
	c := g.counter
	g.counter++
	g.used++
	g.mu.Unlock()

	dst = append(dst, g.prefix[:g.plen]...)
	n := len(dst)
	dst = append(dst, "000000000000"...)
	for i := 7; i >= 0; i-- {
		dst[n+i] = hexUpper[diff&0xF]
		diff >>= 4
	}
	for i := 11; i >= 8; i-- {
		dst[n+i] = hexUpper[c&0xF]
		c >>= 4
	}
	return dst
}

func (g *UniqIDGenerator) setMonth(ms int64) {
	s := monthStart(time.UnixMilli(ms).In(g.loc))
	g.start = s.UnixMilli()
	g.next = s.AddDate(0, 1, 0).UnixMilli()
}

// fakeIDAddr is Java's createFakeIP: the low 4 bytes of the clock in ms.
func fakeIDAddr(now time.Time) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(now.UnixMilli()))
	return netip.AddrFrom4(b)
}

// LocalIDAddr picks the address for unique ids from this host's interface
// addresses, in the order the OS lists them (see ChooseIDAddr). It returns
// the zero Addr when there is none.
func LocalIDAddr() netip.Addr {
	ifaces, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}
	}
	var addrs []netip.Addr
	for _, ifc := range ifaces {
		as, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range as {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
					addrs = append(addrs, ip.Unmap())
				}
			}
		}
	}
	return ChooseIDAddr(addrs)
}

// ChooseIDAddr applies Java's UtilAll.getIP rule to a list of addresses:
// the first public address of either family wins; failing that, the first
// private IPv4 address (10/8, 172.16/12, 192.168/16). Unlike 4.9.8, and
// like 5.1+, loopback, link-local, multicast and unspecified addresses are
// never chosen: Go lists the loopback interface first, so 4.9.8's rule
// would put 127.0.0.1 into every id. IPv6 site-local (fec0::/10) counts as
// private and is skipped, unique-local (fc00::/7) counts as public, as in
// Java. It returns the zero Addr when nothing qualifies.
func ChooseIDAddr(addrs []netip.Addr) netip.Addr {
	var private netip.Addr
	for _, ip := range addrs {
		ip = ip.Unmap()
		if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsMulticast() ||
			ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
			continue
		}
		if ip.Is4() {
			a := ip.As4()
			if a[0] == 0 || a[0] >= 224 { // not a valid host address
				continue
			}
			if isPrivateIPv4(a) {
				if !private.IsValid() {
					private = ip
				}
				continue
			}
			return ip
		}
		a := ip.As16()
		if a[0] == 0xFE && a[1]&0xC0 == 0xC0 { // site-local fec0::/10
			continue
		}
		return ip
	}
	return private
}

func isPrivateIPv4(a [4]byte) bool {
	return a[0] == 10 || (a[0] == 172 && a[1]&0xF0 == 16) || (a[0] == 192 && a[1] == 168)
}
