package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// extraListeners are further ports serving the same handlers, such as the
// VIP channel (fastListenPort) a Java broker opens beside its port.
type extraListeners struct {
	mu  sync.Mutex
	lns []net.Listener
	wg  sync.WaitGroup
}

// ListenAlso serves the same handlers on addr too, once Start has
// succeeded; Close stops it with the main listener. It returns the bound
// address.
func (s *Server) ListenAlso(addr string) (string, error) {
	s.gate.RLock()
	ok := s.started && !s.draining
	s.gate.RUnlock()
	if !ok {
		return "", errors.New("rocketmq: server: ListenAlso needs a started server")
	}
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("rocketmq: listen on %s: %w", addr, err)
	}
	x := &s.extra
	x.mu.Lock()
	x.lns = append(x.lns, ln)
	x.wg.Add(1)
	x.mu.Unlock()
	go func() {
		defer x.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				s.errLog.log(s.log, "accept failed; backing off", "err", err, "addr", addr)
				select {
				case <-s.done:
					return
				case <-time.After(minAcceptDelay * 20):
				}
				continue
			}
			s.admit(nc)
		}
	}()
	return ln.Addr().String(), nil
}

// closeExtra closes the further listeners and waits for their loops.
func (s *Server) closeExtra() {
	x := &s.extra
	x.mu.Lock()
	for _, ln := range x.lns {
		_ = ln.Close()
	}
	x.lns = nil
	x.mu.Unlock()
	x.wg.Wait()
}
