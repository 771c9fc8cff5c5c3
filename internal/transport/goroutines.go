package transport

import (
	"runtime"
	"sync"
)

// Goroutines counts goroutines like a sync.WaitGroup and knows which they
// are, so that Wait called from one of them (a callback that shuts its
// client down) waits for all the others and returns instead of waiting
// for itself. The caller then ends when its callback returns. Knowing a
// goroutine costs a stack read (about a microsecond) when it starts, so
// Goroutines is for goroutines that live long or start rarely, never per
// call.
type Goroutines struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	ids map[uint64]*member
}

type member struct{ detached bool }

// Go runs fn on a new counted goroutine.
func (g *Goroutines) Go(fn func()) {
	g.Add(1)
	go func() {
		defer g.Enter()()
		fn()
	}()
}

// Add counts n goroutines about to start; each calls Enter first thing
// and the function Enter returns last thing.
func (g *Goroutines) Add(n int) { g.wg.Add(n) }

// Enter makes the calling goroutine, counted by Add, known; the returned
// function ends it.
func (g *Goroutines) Enter() (exit func()) {
	id := goid()
	m := &member{}
	g.mu.Lock()
	if g.ids == nil {
		g.ids = make(map[uint64]*member)
	}
	g.ids[id] = m
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		delete(g.ids, id)
		detached := m.detached
		g.mu.Unlock()
		if !detached {
			g.wg.Done()
		}
	}
}

// Wait waits for every counted goroutine but the caller, when the caller
// is one of them: it is no longer counted (its own exit does not count it
// down again).
func (g *Goroutines) Wait() {
	g.Detach()
	g.wg.Wait()
}

// Detach stops counting the calling goroutine if it is one of g's, so
// that a Wait elsewhere does not wait for it; it reports whether it was.
func (g *Goroutines) Detach() bool {
	id := goid()
	g.mu.Lock()
	m := g.ids[id]
	was := m != nil && !m.detached
	if was {
		m.detached = true
	}
	g.mu.Unlock()
	if was {
		g.wg.Done()
	}
	return was
}

// goid returns the id of the calling goroutine, read from the first line
// of its stack trace ("goroutine 42 [running]:"). The runtime offers no
// other way; the id is only compared, never used to reach a goroutine.
func goid() uint64 {
	var buf [40]byte
	n := runtime.Stack(buf[:], false)
	const prefix = "goroutine "
	var id uint64
	for _, b := range buf[len(prefix):n] {
		if b < '0' || b > '9' {
			break
		}
		id = id*10 + uint64(b-'0')
	}
	return id
}
