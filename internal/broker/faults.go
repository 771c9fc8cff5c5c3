package broker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Fault changes how a server treats requests of one code, for tests.
// Delay applies first; then Drop swallows the request (no response ever),
// or Respond answers with Code and Remark instead of running the handler.
// With neither, the request is served normally after Delay.
type Fault struct {
	Delay   time.Duration
	Drop    bool
	Respond bool
	Code    int32
	Remark  string
	// Times limits how many requests the fault applies to; 0 means until
	// it is cleared.
	Times int
	// Match, when set, limits the fault to the requests it returns true
	// for; Times counts only those. It runs on the request's goroutine and
	// must not keep req.
	Match func(req *remoting.Command) bool
}

// FaultTable holds Faults by request code. The zero value has none. The
// NameServer uses one too (wrapped around its handlers by rmqtest).
type FaultTable struct {
	n  atomic.Int32 // len(m), so a request skips mu when no fault is set
	mu sync.Mutex
	m  map[int32]*faultEntry
}

type faultTable = FaultTable

type faultEntry struct {
	f    Fault
	left int // remaining uses when f.Times > 0
}

// SetFault installs f for requests with the given code; nil clears it.
func (b *Broker) SetFault(code int32, f *Fault) { b.faults.Set(code, f) }

// Set installs f for requests with the given code; nil clears it.
func (t *FaultTable) Set(code int32, f *Fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() { t.n.Store(int32(len(t.m))) }()
	if f == nil {
		delete(t.m, code)
		return
	}
	if t.m == nil {
		t.m = make(map[int32]*faultEntry)
	}
	t.m[code] = &faultEntry{f: *f, left: f.Times}
}

// empty reports, without the lock, that no fault is set.
func (t *FaultTable) empty() bool { return t.n.Load() == 0 }

// Serve answers req (of the given code) the way its fault says, calling
// serve for the normal answer when the fault lets the request through or
// no fault matches.
func (t *FaultTable) Serve(ctx context.Context, code int32, req *remoting.Command, serve func() *remoting.Command) *remoting.Command {
	f, ok := t.take(code, req)
	if !ok {
		return serve()
	}
	if f.Delay > 0 {
		tm := time.NewTimer(f.Delay)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return nil
		}
	}
	switch {
	case f.Drop:
		return nil
	case f.Respond:
		return remoting.NewResponse(f.Code, f.Remark)
	}
	return serve()
}

func (t *FaultTable) take(code int32, req *remoting.Command) (Fault, bool) {
	if t.empty() {
		return Fault{}, false
	}
	t.mu.Lock()
	e, ok := t.m[code]
	t.mu.Unlock()
	if !ok || (e.f.Match != nil && !e.f.Match(req)) {
		return Fault{}, false
	}
	if e.f.Times > 0 {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.m[code] != e || e.left <= 0 {
			return Fault{}, false // used up or replaced meanwhile
		}
		e.left--
		if e.left == 0 {
			delete(t.m, code)
			t.n.Store(int32(len(t.m)))
		}
	}
	return e.f, true
}
