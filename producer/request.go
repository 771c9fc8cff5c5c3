package producer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

// newCorrelationID returns a random UUID string, as Java's
// CorrelationIdUtil does.
func newCorrelationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// deliverReply hands a pushed reply to the request waiting for it.
func (r *runState) deliverReply(m *rocketmq.MessageExt) {
	corr := m.Property(rocketmq.PropertyCorrelationID)
	r.reqMu.Lock()
	ch := r.requests[corr]
	delete(r.requests, corr)
	r.reqMu.Unlock()
	if ch != nil {
		ch <- m // buffered, one reply per request
	}
}

// requestTimeout is the configured timeout cut to ctx's deadline.
func (p *Producer) requestTimeout(ctx context.Context) time.Duration {
	d := p.cfg.requestTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < d {
			d = left
		}
	}
	return d
}

// prepareRequest adds the request-reply properties (Java
// prepareSendRequest): correlation id, reply-to client id and TTL in ms.
func (p *Producer) prepareRequest(r *runState, msg *rocketmq.Message, timeout time.Duration) (*envelope, string, error) {
	corr := newCorrelationID()
	ttl := timeout.Milliseconds()
	if ttl < 1 {
		ttl = 1
	}
	e, err := p.prepare(KindRequest, []*rocketmq.Message{msg},
		prop{rocketmq.PropertyCorrelationID, corr},
		prop{rocketmq.PropertyReplyToClient, r.api.clientID()},
		prop{rocketmq.PropertyMessageTTL, strconv.FormatInt(ttl, 10)})
	return e, corr, err
}

// doRequest sends and waits for the reply within timeout.
func (p *Producer) doRequest(ctx context.Context, r *runState, msg *rocketmq.Message, sel QueueSelector, timeout time.Duration) (*rocketmq.MessageExt, error) {
	e, corr, err := p.prepareRequest(r, msg, timeout)
	if err != nil {
		return nil, err
	}
	ch := make(chan *rocketmq.MessageExt, 1)
	r.reqMu.Lock()
	r.requests[corr] = ch
	r.reqMu.Unlock()
	defer func() {
		r.reqMu.Lock()
		delete(r.requests, corr)
		r.reqMu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := p.sendEnvelope(ctx, r, e, sel)
	if err != nil {
		return nil, err
	}
	// The broker pushes the reply on this connection, which the transport
	// may otherwise leave unread for a while once no call is in flight.
	if addr, ok := r.api.brokerAddr(res.Queue.BrokerName); ok {
		r.api.readSoon(addr)
	}
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return nil, ErrRequestTimeout
		}
		return nil, ctx.Err()
	case <-r.ctx.Done():
		return nil, ErrNotStarted // Shutdown gave up waiting
	}
}

// Request is Producer.Request with this Sender's options.
func (s *Sender) Request(ctx context.Context, msg *rocketmq.Message) (*rocketmq.MessageExt, error) {
	r, err := s.p.enter()
	if err != nil {
		return nil, err
	}
	defer r.leave()
	return s.p.doRequest(ctx, r, msg, s.sel, s.p.requestTimeout(ctx))
}

// RequestAsync is Producer.RequestAsync with this Sender's options.
func (s *Sender) RequestAsync(ctx context.Context, msg *rocketmq.Message, cb func(*rocketmq.MessageExt, error)) error {
	if cb == nil {
		cb = func(*rocketmq.MessageExt, error) {}
	}
	if err := s.p.checkMessage(msg); err != nil {
		return err
	}
	timeout := s.p.requestTimeout(ctx)
	return s.p.goAsync(ctx, int64(len(msg.Body)), func(ctx context.Context, r *runState) func() {
		reply, err := s.p.doRequest(ctx, r, msg, s.sel, timeout)
		return func() { cb(reply, err) }
	})
}
