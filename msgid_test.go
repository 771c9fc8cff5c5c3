package rocketmq

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type messageIDVectors struct {
	OffsetMsgID struct {
		Cases []struct {
			HostLiteral string `json:"hostLiteral"`
			Port        uint16 `json:"port"`
			Family      string `json:"javaAddressFamily"`
			Offset      int64  `json:"offset"`
			OffsetStr   string `json:"offsetString"`
			BySocket    string `json:"createMessageIdSocketAddress"`
			ByBuffer    string `json:"createMessageIdByteBuffer"`
			Decoded     struct {
				IP     string `json:"ip"`
				Port   uint16 `json:"port"`
				Offset int64  `json:"offset"`
				Addr   string `json:"socketAddress2String"`
			} `json:"decoded"`
		} `json:"cases"`
	} `json:"offsetMsgId"`
	DecodeMessageID struct {
		Cases []struct {
			ID     string `json:"id"`
			IP     string `json:"ip"`
			Port   uint16 `json:"port"`
			Offset int64  `json:"offset"`
			Addr   string `json:"socketAddress2String"`
		} `json:"cases"`
	} `json:"decodeMessageId"`
	UniqKey struct {
		Process struct {
			PID          int    `json:"pid"`
			PIDLow16     int    `json:"pidLow16"`
			Hash         int32  `json:"classLoaderHashCode"`
			FixString    string `json:"fixString"`
			TimeZone     string `json:"timeZone"`
			MonthStartMs int64  `json:"monthStartMs"`
			ClockBefore  int64  `json:"clockBeforeMs"`
		} `json:"process"`
		Generated     []uniqKeyCase `json:"generated"`
		BoundaryQuirk struct {
			ID      string `json:"id"`
			ClockMs int64  `json:"clockMs"`
			TimeMs  int64  `json:"getNearlyTimeFromIDMs"`
		} `json:"boundaryQuirk"`
		DecodeFixed struct {
			Cases []uniqKeyCase `json:"cases"`
		} `json:"decodeFixed"`
	} `json:"uniqKey"`
}

type uniqKeyCase struct {
	ID     string `json:"id"`
	Layout struct {
		IPHex    string `json:"ipHex"`
		PID      int    `json:"pidShort"`
		Hash     int32  `json:"classLoaderHashCode"`
		Unsigned uint32 `json:"msSinceMonthStartUnsigned"`
		Signed   int32  `json:"msSinceMonthStartAsInt32"`
		Counter  uint16 `json:"counter"`
	} `json:"layout"`
	IPStr      string  `json:"getIPStrFromID"`
	IPHex      string  `json:"getIPFromIDHex"`
	PID        int     `json:"getPidFromID"`
	TimeMs     int64   `json:"getNearlyTimeFromIDMs"`
	ClockAtDec []int64 `json:"clockAroundNearlyTimeCallMs"`
}

func checkUniqKeyCase(t *testing.T, c uniqKeyCase) {
	t.Helper()
	ip, err := IPFromUniqID(c.ID)
	if err != nil || hex.EncodeToString(ip.AsSlice()) != c.IPHex {
		t.Errorf("IPFromUniqID = %v %v, want %s", ip, err, c.IPHex)
	}
	if s, err := IPStringFromUniqID(c.ID); err != nil || s != c.IPStr {
		t.Errorf("IPStringFromUniqID = %q %v, want %q", s, err, c.IPStr)
	}
	if p, err := PIDFromUniqID(c.ID); err != nil || p != c.PID {
		t.Errorf("PIDFromUniqID = %d %v, want %d", p, err, c.PID)
	}
	// The Java decoder ran in UTC at the recorded clock.
	now := time.UnixMilli(c.ClockAtDec[0]).UTC()
	if tm, err := TimeFromUniqID(c.ID, now); err != nil || tm.UnixMilli() != c.TimeMs {
		t.Errorf("TimeFromUniqID = %v %v, want %d", tm.UnixMilli(), err, c.TimeMs)
	}
	raw, _ := hex.DecodeString(c.ID)
	n := len(raw)
	if int32(binary.BigEndian.Uint32(raw[n-10:])) != c.Layout.Hash || binary.BigEndian.Uint32(raw[n-6:]) != c.Layout.Unsigned ||
		int32(binary.BigEndian.Uint32(raw[n-6:])) != c.Layout.Signed || binary.BigEndian.Uint16(raw[n-2:]) != c.Layout.Counter {
		t.Errorf("layout of %s differs from %+v", c.ID, c.Layout)
	}
}

func TestMessageIDJavaVectors(t *testing.T) {
	var v messageIDVectors
	loadVectors(t, "messageId", &v)
	if len(v.OffsetMsgID.Cases) != 48 {
		t.Fatalf("%d offset cases", len(v.OffsetMsgID.Cases))
	}
	for _, c := range v.OffsetMsgID.Cases {
		t.Run("offset/"+c.HostLiteral+"/"+c.OffsetStr, func(t *testing.T) {
			if strconv.FormatInt(c.Offset, 10) != c.OffsetStr || c.BySocket != c.ByBuffer {
				t.Fatal("vector inconsistent")
			}
			host := netip.AddrPortFrom(netip.MustParseAddr(c.HostLiteral), c.Port)
			if got := EncodeOffsetMsgID(host, c.Offset); got != c.BySocket {
				t.Errorf("EncodeOffsetMsgID = %s, want %s", got, c.BySocket)
			}
			if got := string(AppendOffsetMsgID([]byte("x"), host, c.Offset)); got != "x"+c.BySocket {
				t.Errorf("AppendOffsetMsgID = %s", got)
			}
			addr, off, err := DecodeOffsetMsgID(c.BySocket)
			if err != nil {
				t.Fatal(err)
			}
			if off != c.Decoded.Offset || addr.Port() != c.Decoded.Port || addr.Addr() != host.Addr().Unmap() {
				t.Errorf("decoded %v %d", addr, off)
			}
			if (c.Family == "IPv4") != addr.Addr().Is4() {
				t.Errorf("family %v, Java %s", addr, c.Family)
			}
			if want := parseJavaAddr(t, c.Decoded.Addr); addr != want {
				t.Errorf("address %v, Java %s", addr, c.Decoded.Addr)
			}
		})
	}
	for _, c := range v.DecodeMessageID.Cases {
		t.Run("decode/"+c.ID, func(t *testing.T) {
			addr, off, err := DecodeOffsetMsgID(c.ID)
			if err != nil || off != c.Offset || addr.Port() != c.Port || addr != parseJavaAddr(t, c.Addr) {
				t.Errorf("DecodeOffsetMsgID = %v %d %v, want %s %d", addr, off, err, c.Addr, c.Offset)
			}
		})
	}
	for i, c := range v.UniqKey.Generated {
		t.Run("generated/"+strconv.Itoa(i), func(t *testing.T) {
			checkUniqKeyCase(t, c)
			if !strings.HasPrefix(c.ID, v.UniqKey.Process.FixString) {
				t.Errorf("id %s lacks the process prefix", c.ID)
			}
		})
	}
	for _, c := range v.UniqKey.DecodeFixed.Cases {
		t.Run("fixed/"+c.ID, func(t *testing.T) { checkUniqKeyCase(t, c) })
	}
	t.Run("boundaryQuirk", func(t *testing.T) {
		q := v.UniqKey.BoundaryQuirk
		tm, err := TimeFromUniqID(q.ID, time.UnixMilli(q.ClockMs).UTC())
		if err != nil || tm.UnixMilli() != q.TimeMs {
			t.Errorf("TimeFromUniqID = %d %v, want %d (previous month)", tm.UnixMilli(), err, q.TimeMs)
		}
	})
	t.Run("generator reproduces Java's ids", func(t *testing.T) {
		p := v.UniqKey.Process
		ip, err := IPFromUniqID(v.UniqKey.Generated[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		clock := time.UnixMilli(p.ClockBefore + 1).UTC() // the generated ids' time field
		g := NewUniqIDGenerator(WithIDAddr(ip), WithIDPID(p.PID), WithIDHash(p.Hash),
			WithIDClock(func() time.Time { return clock }))
		if g.Prefix() != p.FixString {
			t.Fatalf("prefix %s, want %s", g.Prefix(), p.FixString)
		}
		for i, c := range v.UniqKey.Generated {
			if id := g.NewID(); id != c.ID {
				t.Errorf("id %d = %s, want %s", i, id, c.ID)
			}
		}
	})
	t.Run("protocol 6.1 example", func(t *testing.T) {
		clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(0x00A1B2C3 * time.Millisecond)
		g := NewUniqIDGenerator(WithIDAddr(netip.MustParseAddr("192.168.0.10")), WithIDPID(12345),
			WithIDHash(0x1B6D3586), WithIDClock(func() time.Time { return clock }))
		g.NewID() // counter 0
		if id := g.NewID(); id != "C0A8000A30391B6D358600A1B2C30001" {
			t.Errorf("id %s", id)
		}
	})
}

func TestDecodeIDErrors(t *testing.T) {
	for _, id := range []string{"", "C0A8", strings.Repeat("0", 31), strings.Repeat("0", 33), strings.Repeat("G", 32),
		"00000000" + "00010000" + strings.Repeat("0", 16)} { // last one: port 65536
		if _, _, err := DecodeOffsetMsgID(id); !errors.Is(err, ErrInvalidMsgID) {
			t.Errorf("DecodeOffsetMsgID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", "ABC", strings.Repeat("Z", 56)} {
		if _, err := IPFromUniqID(id); !errors.Is(err, ErrInvalidMsgID) {
			t.Errorf("IPFromUniqID(%q) = %v", id, err)
		}
		if _, err := PIDFromUniqID(id); !errors.Is(err, ErrInvalidMsgID) {
			t.Errorf("PIDFromUniqID(%q) = %v", id, err)
		}
		if _, err := TimeFromUniqID(id, time.Now()); !errors.Is(err, ErrInvalidMsgID) {
			t.Errorf("TimeFromUniqID(%q) = %v", id, err)
		}
		if _, err := IPStringFromUniqID(id); !errors.Is(err, ErrInvalidMsgID) {
			t.Errorf("IPStringFromUniqID(%q) = %v", id, err)
		}
	}
}

// TestUniqIDMillion makes 1,000,000 ids back to back and checks that none
// repeats. All ids share the prefix, so the 12-digit suffix is the key.
func TestUniqIDMillion(t *testing.T) {
	g := NewUniqIDGenerator(WithIDAddr(netip.MustParseAddr("192.0.2.2")))
	prefix := g.Prefix()
	const n = 1_000_000
	seen := make(map[uint64]struct{}, n)
	for i := range n {
		id := g.NewID()
		if len(id) != 32 || id[:20] != prefix {
			t.Fatalf("id %d = %s, prefix %s", i, id, prefix)
		}
		k, err := strconv.ParseUint(id[20:], 16, 64)
		if err != nil {
			t.Fatalf("id %d = %s: %v", i, id, err)
		}
		if _, dup := seen[k]; dup {
			t.Fatalf("id %d = %s repeats", i, id)
		}
		seen[k] = struct{}{}
	}
}

// TestUniqIDConcurrent shares a generator between goroutines.
func TestUniqIDConcurrent(t *testing.T) {
	g := NewUniqIDGenerator(WithIDAddr(netip.MustParseAddr("2001:db8::7")))
	const workers, each = 4, 20_000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ids[w] = append(ids[w], g.NewID())
			}
		}()
	}
	wg.Wait()
	seen := make(map[string]struct{}, workers*each)
	for _, list := range ids {
		for _, id := range list {
			if len(id) != 56 {
				t.Fatalf("IPv6 id %s has %d characters", id, len(id))
			}
			if _, dup := seen[id]; dup {
				t.Fatalf("%s repeats", id)
			}
			seen[id] = struct{}{}
		}
	}
}

// TestUniqIDFrozenClock makes more than 65536 ids on one millisecond: the
// generator borrows the next millisecond instead of repeating a counter.
func TestUniqIDFrozenClock(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	g := NewUniqIDGenerator(WithIDAddr(netip.MustParseAddr("192.0.2.2")), WithIDClock(func() time.Time { return at }))
	base := uint32(at.Sub(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)).Milliseconds())
	seen := make(map[string]struct{}, 200_000)
	for i := range 200_000 {
		id := g.NewID()
		if _, dup := seen[id]; dup {
			t.Fatalf("id %d %s repeats", i, id)
		}
		seen[id] = struct{}{}
		ms, _ := strconv.ParseUint(id[20:28], 16, 32)
		if want := base + uint32(i>>16); uint32(ms) != want {
			t.Fatalf("id %d: time field %d, want %d", i, ms, want)
		}
	}
	// A clock that steps back keeps the logical time.
	at = at.Add(-time.Hour)
	id := g.NewID()
	if ms, _ := strconv.ParseUint(id[20:28], 16, 32); uint32(ms) != base+3 {
		t.Errorf("after a step back: time field %d, want %d", ms, base+3)
	}
}

// TestUniqIDMonthRollover crosses a month boundary (in the clock's zone)
// and checks the time field restarts and decodes back.
func TestUniqIDMonthRollover(t *testing.T) {
	loc := time.FixedZone("UTC+8", 8*3600)
	now := time.Date(2026, 1, 31, 23, 59, 59, 999e6, loc)
	g := NewUniqIDGenerator(WithIDAddr(netip.MustParseAddr("192.0.2.2")), WithIDClock(func() time.Time { return now }))
	field := func(id string) uint32 {
		v, _ := strconv.ParseUint(id[20:28], 16, 32)
		return uint32(v)
	}
	a := g.NewID()
	if want := uint32(30*86400000 + 86399999); field(a) != want {
		t.Errorf("January field %d, want %d", field(a), want)
	}
	now = now.Add(2 * time.Millisecond)
	b := g.NewID()
	if field(b) != 1 {
		t.Errorf("February field %d, want 1", field(b))
	}
	got, err := TimeFromUniqID(b, now.Add(time.Second))
	if err != nil || !got.Equal(now) {
		t.Errorf("decoded %v %v, want %v", got, err, now)
	}
	// Late in a 31-day month the field passes 2^31 and reads as unsigned.
	now = time.Date(2026, 3, 31, 23, 0, 0, 0, loc)
	c := g.NewID()
	if field(c) < 1<<31 {
		t.Errorf("field %d below 2^31", field(c))
	}
	if got, err := TimeFromUniqID(c, now.Add(time.Minute)); err != nil || !got.Equal(now) {
		t.Errorf("late-month decode %v %v", got, err)
	}
}

func TestUniqIDDefaults(t *testing.T) {
	a, b := NewUniqIDGenerator(), NewUniqIDGenerator()
	if a.Prefix() == b.Prefix() {
		t.Errorf("two generators share the prefix %s (hash should differ)", a.Prefix())
	}
	id := a.NewID()
	if len(id) != 32 && len(id) != 56 {
		t.Fatalf("id %s", id)
	}
	if strings.ToUpper(id) != id {
		t.Errorf("id %s is not uppercase", id)
	}
	if tm, err := TimeFromUniqID(id, time.Now().Add(time.Second)); err != nil || time.Since(tm) > time.Minute {
		t.Errorf("time of a fresh id: %v %v", tm, err)
	}
}

func TestChooseIDAddr(t *testing.T) {
	p := netip.MustParseAddr
	cases := []struct {
		name  string
		addrs []netip.Addr
		want  netip.Addr
	}{
		{"none", nil, netip.Addr{}},
		{"loopback only", []netip.Addr{p("127.0.0.1"), p("::1")}, netip.Addr{}},
		{"private only", []netip.Addr{p("127.0.0.1"), p("10.0.0.5"), p("192.168.1.2")}, p("10.0.0.5")},
		{"public beats private", []netip.Addr{p("192.168.1.2"), p("203.0.113.9")}, p("203.0.113.9")},
		{"first public wins", []netip.Addr{p("198.51.100.1"), p("203.0.113.9")}, p("198.51.100.1")},
		{"172.16/12 private", []netip.Addr{p("172.31.0.1"), p("172.32.0.1")}, p("172.32.0.1")},
		{"ipv6 ula is public", []netip.Addr{p("fe80::1"), p("fec0::1"), p("fd00::2"), p("10.0.0.1")}, p("fd00::2")},
		{"link-local v4 skipped", []netip.Addr{p("169.254.1.1"), p("192.168.0.1")}, p("192.168.0.1")},
		{"mapped v4", []netip.Addr{p("::ffff:203.0.113.9")}, p("203.0.113.9")},
		{"multicast skipped", []netip.Addr{p("224.0.0.1"), p("ff02::1")}, netip.Addr{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ChooseIDAddr(c.addrs); got != c.want {
				t.Errorf("ChooseIDAddr = %v, want %v", got, c.want)
			}
		})
	}
}

func BenchmarkUniqID(b *testing.B) {
	g := NewUniqIDGenerator(WithIDAddr(netip.MustParseAddr("192.0.2.2")))
	b.ReportAllocs()
	for range b.N {
		_ = g.NewID()
	}
}

// parseJavaAddr parses Java's socketAddress2String form: host, ':' and
// port, IPv6 without brackets.
func parseJavaAddr(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	i := strings.LastIndexByte(s, ':')
	ip, err := netip.ParseAddr(s[:max(i, 0)])
	port, perr := strconv.ParseUint(s[i+1:], 10, 16)
	if err != nil || perr != nil {
		t.Fatalf("Java address %q: %v %v", s, err, perr)
	}
	return netip.AddrPortFrom(ip, uint16(port))
}
