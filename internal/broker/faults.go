package broker

import (
	"sync"
	"sync/atomic"
	"time"
)

// Fault changes how the broker treats one request code, for tests.
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
}

type faultTable struct {
	n  atomic.Int32 // len(m), so a request skips mu when no fault is set
	mu sync.Mutex
	m  map[int32]*faultEntry
}

type faultEntry struct {
	f    Fault
	left int // remaining uses when f.Times > 0
}

// SetFault installs f for requests with the given code; nil clears it.
func (b *Broker) SetFault(code int32, f *Fault) {
	t := &b.faults
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
func (t *faultTable) empty() bool { return t.n.Load() == 0 }

func (t *faultTable) take(code int32) (Fault, bool) {
	if t.empty() {
		return Fault{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[code]
	if !ok {
		return Fault{}, false
	}
	if e.f.Times > 0 {
		e.left--
		if e.left <= 0 {
			delete(t.m, code)
			t.n.Store(int32(len(t.m)))
		}
	}
	return e.f, true
}
