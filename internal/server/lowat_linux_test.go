package server

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// The loop asks the kernel to wake it only once the frame it waits for is
// complete, and a frame sent in pieces with pauses still gets its answer.
func TestWakeOnlyForWholeFrames(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, echo)
	cl, sc := dialConn(t, s)
	lowat := func() int {
		n, err := syscall.GetsockoptInt(sc.fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT)
		if err != nil {
			t.Fatalf("getsockopt: %v", err)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		body int
		cuts []int
		// SO_RCVLOWAT expected after each piece but the last; -1: the
		// rest of the frame after the first piece (the kernel does not
		// wake the loop again before the frame is complete).
		lowats []int
	}{
		{"prefix cut", 10, []int{2}, []int{2}},
		{"header cut", 10, []int{4, 9}, []int{-1, -1}},
		{"body cut", 1000, []int{100, 600}, []int{-1, -1}},
		{"beyond the cap", 200 << 10, []int{50 << 10}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := rawframe.Frame(t, req(codeEcho, 5, remoting.SerializeJSON, string(make([]byte, tc.body))))
			prev := 0
			for i, cut := range tc.cuts {
				cl.Write(f[prev:cut])
				prev = cut
				want := tc.lowats[i]
				if want < 0 {
					want = len(f) - tc.cuts[0]
				}
				testutil.WaitFor(t, 0, fmt.Sprint("SO_RCVLOWAT ", want), func() bool { return lowat() == want })
				time.Sleep(20 * time.Millisecond) // the wait is the assertion: it stays there
				if got := lowat(); got != want {
					t.Fatalf("after %d of %d bytes SO_RCVLOWAT = %d, want %d", cut, len(f), got, want)
				}
			}
			cl.Write(f[prev:])
			if resp := cl.Read(); resp.Opaque != 5 || len(resp.Body) != tc.body {
				t.Fatalf("opaque %d body %d bytes", resp.Opaque, len(resp.Body))
			}
			// At a frame boundary the loop waits for a length prefix.
			testutil.WaitFor(t, 0, "SO_RCVLOWAT back at a boundary", func() bool { return lowat() == 4 })
		})
	}
}
