package acl

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// addrMatcher is a white remote address of plain_acl.yml, as Java's
// RemoteAddressStrategyFactory reads it: blank matches nothing; "*",
// "*.*.*.*" or "*:*:*:*:*:*:*:*" everything; "a,b,c" exact addresses;
// "10.1.1.{2,3}" the listed last parts; "10.1.*" / "10.1.1.1-100" ranges
// (per IPv4 part: a number, "n-m" or "*"); otherwise one exact address.
type addrMatcher struct {
	any   bool
	exact []netip.Addr
	parts [][4][2]int // IPv4 ranges: per part [lo, hi]
}

func parseAddrMatcher(s string) (addrMatcher, error) {
	s = strings.TrimSpace(s)
	var m addrMatcher
	switch {
	case s == "":
		return m, nil
	case s == "*" || s == "*.*.*.*" || s == "*:*:*:*:*:*:*:*":
		m.any = true
		return m, nil
	case strings.HasSuffix(s, "}"):
		i := strings.LastIndexByte(s, '{')
		if i < 0 || !strings.HasSuffix(s[:i], ".") || strings.Count(s[:i], ".") != 3 {
			return m, fmt.Errorf("bad address list %q: want a.b.c.{x,y}", s)
		}
		for _, last := range strings.Split(s[i+1:len(s)-1], ",") {
			a, err := netip.ParseAddr(s[:i] + strings.TrimSpace(last))
			if err != nil || !a.Is4() {
				return m, fmt.Errorf("bad address %q in %q", s[:i]+last, s)
			}
			m.exact = append(m.exact, a)
		}
		return m, nil
	case strings.Contains(s, ","):
		for _, one := range strings.Split(s, ",") {
			if strings.TrimSpace(one) == "" {
				continue
			}
			a, err := netip.ParseAddr(strings.TrimSpace(one))
			if err != nil {
				return m, fmt.Errorf("bad address %q in %q", one, s)
			}
			m.exact = append(m.exact, a.Unmap())
		}
		return m, nil
	case strings.ContainsAny(s, "*-"):
		r, err := parseRange(s)
		if err != nil {
			return m, err
		}
		m.parts = append(m.parts, r)
		return m, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return m, fmt.Errorf("bad address %q", s)
	}
	m.exact = append(m.exact, a.Unmap())
	return m, nil
}

func parseRange(s string) ([4][2]int, error) {
	var r [4][2]int
	ps := strings.Split(strings.TrimSuffix(s, "."), ".")
	if len(ps) > 4 || strings.Contains(s, ":") {
		return r, fmt.Errorf("bad address range %q (IPv4 only)", s)
	}
	for i := range r {
		if i >= len(ps) || ps[i] == "*" {
			r[i] = [2]int{0, 255}
			continue
		}
		lo, hi, isRange := strings.Cut(ps[i], "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b > 255 || a > b {
			return r, fmt.Errorf("bad address range %q", s)
		}
		r[i] = [2]int{a, b}
	}
	return r, nil
}

func (m *addrMatcher) match(a netip.Addr) bool {
	if m.any {
		return true
	}
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, e := range m.exact {
		if e == a {
			return true
		}
	}
	if a.Is4() {
		b := a.As4()
	next:
		for _, r := range m.parts {
			for i := range r {
				if int(b[i]) < r[i][0] || int(b[i]) > r[i][1] {
					continue next
				}
			}
			return true
		}
	}
	return false
}
