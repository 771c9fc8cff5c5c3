package producer

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
)

// SendKind tells interceptors which API a send attempt belongs to.
type SendKind int

const (
	KindSync    SendKind = iota // Send
	KindAsync                   // SendAsync
	KindOneway                  // SendOneway
	KindRequest                 // Request, RequestAsync
)

func (k SendKind) String() string {
	switch k {
	case KindSync:
		return "sync"
	case KindAsync:
		return "async"
	case KindOneway:
		return "oneway"
	case KindRequest:
		return "request"
	}
	return "unknown"
}

// SendInfo describes one send attempt to interceptors. Queue and
// BrokerAddr are the attempt's choice; Topic and Queue.Topic are without
// the namespace. Interceptors must not modify Messages.
type SendInfo struct {
	Kind       SendKind
	Batch      bool
	Group      string
	Topic      string
	Messages   []*rocketmq.Message
	Queue      rocketmq.MessageQueue
	BrokerAddr string
	Attempt    int // 0 for the first attempt
}

// Invoker performs the attempt an interceptor wraps. A oneway attempt
// returns a nil result.
type Invoker func(ctx context.Context) (*rocketmq.SendResult, error)

// Interceptor runs around every send attempt of every kind (sync, async,
// oneway, batch, request). It must call next at most once and return
// what it returns, or an error of its own to fail the attempt. ctx carries
// info as well (InfoFromContext).
type Interceptor func(ctx context.Context, info *SendInfo, next Invoker) (*rocketmq.SendResult, error)

type infoKey struct{}

// InfoFromContext returns the SendInfo of the attempt ctx belongs to,
// inside an interceptor or code it calls.
func InfoFromContext(ctx context.Context) (*SendInfo, bool) {
	i, ok := ctx.Value(infoKey{}).(*SendInfo)
	return i, ok
}

// intercept runs the chain around call.
func intercept(ctx context.Context, chain []Interceptor, info *SendInfo, call Invoker) (*rocketmq.SendResult, error) {
	if len(chain) == 0 {
		return call(ctx)
	}
	ctx = context.WithValue(ctx, infoKey{}, info)
	var step func(i int) Invoker
	step = func(i int) Invoker {
		if i == len(chain) {
			return call
		}
		return func(ctx context.Context) (*rocketmq.SendResult, error) {
			return chain[i](ctx, info, step(i+1))
		}
	}
	return step(0)(ctx)
}
