package server

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Decoding a header is linear in its size, but a frame may carry up to
// MaxFrameSize of it: 13 MiB of a million ext fields took most of a second,
// during which every other connection of the event loop waited. A frame
// whose header is over maxLoopHeader is therefore copied out and decoded
// on a goroutine of its own; the connection decodes nothing else until it
// is done, so requests stay in order, and at most maxBigDecodes run at once.
const (
	maxLoopHeader = 64 << 10
	maxBigDecodes = 2
)

// largeRequest is the frame size over which a request takes a share of
// MaxLargeRequests from the moment it is taken off gnet's buffer until its
// handler returns. A heartbeat naming 50,000 groups is 14 MB; 21 of them
// at once held 1.1 GB of copies and decoded bodies.
const largeRequest = 1 << 20

// takeLarge takes n bytes of MaxLargeRequests; false when they are not
// free. One request is let through alone, however large. Runs on a loop.
func (s *Server) takeLarge(n int) bool {
	for {
		held := s.large.Load()
		if held > 0 && held+int64(n) > int64(s.cfg.MaxLargeRequests) {
			return false
		}
		if s.large.CompareAndSwap(held, held+int64(n)) {
			return true
		}
	}
}

// releaseLarge gives back what takeLarge took (n may be 0).
func (s *Server) releaseLarge(n int) {
	if n > 0 {
		s.large.Add(-int64(n))
	}
}

// headerLen returns the header length of the frame at frame[0:] (length
// prefix included), or -1 when too little of it is there.
func headerLen(frame []byte) int {
	if len(frame) < 8 {
		return -1
	}
	return int(binary.BigEndian.Uint32(frame[4:]) & (1<<24 - 1))
}

// decodeAside decodes frame (an owned copy) off the event loop and
// dispatches it, then lets c's loop read on. c.decoding is set and
// the goroutine is counted in s.wg.
func (s *Server) decodeAside(c *Conn, frame []byte, big int) {
	defer s.wg.Done()
	s.bigSem <- struct{}{}
	cmd, _, err := remoting.DecodeFrame(frame, s.cfg.MaxFrameSize)
	<-s.bigSem
	if err != nil {
		s.releaseLarge(big)
		s.badFrame(c, err)
		_ = c.Close()
	} else {
		s.dispatch(c, cmd, big)
	}
	_ = c.loop.Execute(context.Background(), (*resumer)(c))
}

// resumer is Conn's gnet.Runnable that ends an aside decode.
type resumer Conn

func (r *resumer) Run(context.Context) error {
	c := (*Conn)(r)
	c.decoding = false
	if !c.loopDone {
		_ = c.gc.Wake(nil)
	}
	return nil
}

// ownFrame copies a frame out of gnet's buffer.
func ownFrame(b []byte) []byte { return slices.Clone(b) }
