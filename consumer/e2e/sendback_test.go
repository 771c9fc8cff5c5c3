package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestSendBackFallbacks: when the broker refuses CONSUMER_SEND_MSG_BACK,
// the consumer sends the copy to %RETRY%group itself, with ReconsumeTimes
// 1, RETRY_TOPIC and ORIGIN_MESSAGE_ID, and it comes back under the
// original topic; when that send fails too, the message is consumed again
// locally.
func TestSendBackFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failDirect bool
	}{{"retry topic", false}, {"local", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t)
			e.needFaults(t, "the broker must refuse the send-back")
			topic := e.newTopic(t, 1)
			g := group(t, "")
			if err := e.cluster.Intercept(e.broker, remoting.ConsumerSendMsgBack, rmqtest.Fault{Respond: true, Code: remoting.SystemError, Remark: "injected"}); err != nil {
				t.Fatal(err)
			}
			if tc.failDirect {
				err := e.cluster.Intercept(e.broker, remoting.SendMessageV2, rmqtest.Fault{Respond: true, Code: remoting.SystemError, Remark: "injected", Times: 1,
					Match: func(req *remoting.Command) bool {
						var h remoting.SendMessageRequestHeaderV2
						return h.FromExt(req.Ext) == nil && strings.HasPrefix(h.Topic, rocketmq.RetryGroupTopicPrefix)
					}})
				if err != nil {
					t.Fatal(err)
				}
			}
			rec := newRecorder()
			e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(_ context.Context, _ *rocketmq.MessageExt, n int) (consumer.Result, error) {
				if n == 1 {
					return consumer.RetryLater, nil
				}
				return consumer.Success, nil
			}), consumer.WithConsumeFrom(consumer.FromFirst))
			ids := send(t, e.newProducer(t), topic, 1)
			rec.waitAll(t, ids, 2)
			e.waitConsumed(t, g, topic, 1)
			ds := rec.deliveries(ids[0])
			first, again := ds[0].msg, ds[1].msg
			if again.ReconsumeTimes != 1 || again.Topic != topic || string(again.Body) != string(first.Body) {
				t.Fatalf("again as topic %s reconsume times %d body %q", again.Topic, again.ReconsumeTimes, again.Body)
			}
			if !tc.failDirect {
				e.waitConsumed(t, g, retryTopic(g), 1)
				if again.Property(rocketmq.PropertyOriginMessageID) == "" || again.Property(rocketmq.PropertyRetryTopic) != topic {
					t.Fatalf("retry copy properties %v", again.Properties)
				}
			}
			if len(rec.deliveries(ids[0])) != 2 {
				t.Fatalf("%d deliveries, want 2", len(rec.deliveries(ids[0])))
			}
		})
	}
}

// TestExpiredMessageGivenBack: a handler that ignores its ctx and never
// returns does not hold its queue's offset: past the consume timeout the
// expiry sweep gives the message back, it comes again with ReconsumeTimes
// 1, and the offset moves past it.
func TestExpiredMessageGivenBack(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	g := group(t, "")
	stuck := make(chan struct{})
	defer close(stuck)
	rec := newRecorder()
	var calls atomic.Int32
	e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(_ context.Context, _ *rocketmq.MessageExt, n int) (consumer.Result, error) {
		if calls.Add(1) == 1 {
			<-stuck
		}
		return consumer.Success, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithConsumeTimeout(500*time.Millisecond))
	ids := send(t, e.newProducer(t), topic, 1)
	rec.waitAll(t, ids, 2)
	e.waitConsumed(t, g, topic, 1)
	if ds := rec.deliveries(ids[0]); ds[1].msg.ReconsumeTimes != 1 {
		t.Fatalf("reconsume times %v, want 0 then 1", reconsumeTimes(ds))
	}
}
