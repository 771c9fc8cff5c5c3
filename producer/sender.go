package producer

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
)

// Send is Producer.Send with this Sender's options.
func (s *Sender) Send(ctx context.Context, msgs ...*rocketmq.Message) (*rocketmq.SendResult, error) {
	e, err := s.p.prepare(KindSync, msgs)
	if err != nil {
		return nil, err
	}
	defer s.p.release(e)
	r, err := s.p.enter()
	if err != nil {
		return nil, err
	}
	defer r.leave()
	return s.p.sendEnvelope(ctx, r, e, s.sel)
}

// SendOneway is Producer.SendOneway with this Sender's options.
func (s *Sender) SendOneway(ctx context.Context, msgs ...*rocketmq.Message) error {
	e, err := s.p.prepare(KindOneway, msgs)
	if err != nil {
		return err
	}
	defer s.p.release(e)
	r, err := s.p.enter()
	if err != nil {
		return err
	}
	defer r.leave()
	_, err = s.p.sendEnvelope(ctx, r, e, s.sel)
	return err
}

// SendAsync is Producer.SendAsync with this Sender's options.
func (s *Sender) SendAsync(ctx context.Context, cb func(*rocketmq.SendResult, error), msgs ...*rocketmq.Message) error {
	if cb == nil {
		cb = func(*rocketmq.SendResult, error) {}
	}
	e, err := s.p.prepare(KindAsync, msgs)
	if err != nil {
		return err
	}
	if len(s.p.cfg.interceptors) == 0 {
		return s.p.sendAsync(ctx, e, s.sel, cb)
	}
	// Interceptors wrap a synchronous attempt: one goroutine per send.
	err = s.p.goAsync(ctx, e.size, func(ctx context.Context, r *runState) func() {
		res, err := s.p.sendEnvelope(ctx, r, e, s.sel)
		s.p.release(e)
		return func() { cb(res, err) }
	})
	if err != nil {
		s.p.release(e)
	}
	return err
}
