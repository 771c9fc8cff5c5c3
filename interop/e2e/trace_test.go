package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq"
	ourconsumer "github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/trace"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestOfficialTrace: the official client's trace records (its producer's
// Pub, its push consumer's SubBefore and SubAfter, written with a client
// host after the fields Java reads) reach the trace topic of our broker
// and our decoder reads them with the right message id, topic, group and
// status.
// officialTraceNS is the NameServer the official client's trace client
// of this process was first given.
var officialTraceNS struct {
	sync.Mutex
	addr string
}

// officialTraceNameServer records ns as the process's trace NameServer if
// none was, and returns the one recorded.
func officialTraceNameServer(ns string) string {
	officialTraceNS.Lock()
	defer officialTraceNS.Unlock()
	if officialTraceNS.addr == "" {
		officialTraceNS.addr = ns
	}
	return officialTraceNS.addr
}

func TestOfficialTrace(t *testing.T) {
	if os.Getenv(envExternal) != "" && os.Getenv("ROCKETMQ_TRACE") != "1" {
		t.Skip("needs a broker with traceTopicEnable=true; set ROCKETMQ_TRACE=1 when the external cluster has it")
	}
	e := newEnv(t, 1, rmqtest.WithTraceTopic(""))
	if first := officialTraceNameServer(e.ns); first != e.ns {
		// Its trace client has a fixed instance name and is never shut
		// down: a second one in the process, on another NameServer, is
		// nil (internal.GetOrNewRocketMQClient) and its first send panics.
		t.Skipf("the official client's trace client of this process is bound to the NameServer %s of an earlier run; trace runs once per process (-count=1)", first)
	}
	topic, _ := e.newTopic(t, 2)
	traceCfg := func(group string) *primitive.TraceConfig {
		return &primitive.TraceConfig{GroupName: group, Access: primitive.Local, Resolver: e.resolver()}
	}
	pg := e.name("PG")
	p := e.officialProducer(t, producer.WithGroupName(pg), producer.WithTrace(traceCfg(pg)))
	var ids []string
	for i := range 2 {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("body-%d", i)))
		m.WithTag("TagT")
		m.WithKeys([]string{fmt.Sprintf("key-%d", i)})
		res, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.MsgID)
	}

	cg := e.name("CG")
	var mu sync.Mutex
	got := map[string]bool{}
	pc, err := rmq.NewPushConsumer(consumer.WithNsResolver(e.resolver()), consumer.WithGroupName(cg), consumer.WithInstance(e.name("c")),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset), consumer.WithTrace(traceCfg(cg)))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			got[m.MsgId] = true
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	startOfficial(t, "official consumer", pc)
	testutil.WaitFor(t, 30*time.Second, "both messages consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[ids[0]] && got[ids[1]]
	})

	var rmu sync.Mutex
	records := map[string][]trace.Context{}
	reader, err := ourconsumer.NewPush(ourconsumer.WithGroup(e.name("TR")), ourconsumer.WithNameServers(e.ns),
		ourconsumer.WithConsumeFrom(ourconsumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	err = reader.Subscribe(rocketmq.TopicTrace, ourconsumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (ourconsumer.Result, error) {
		rmu.Lock()
		defer rmu.Unlock()
		for _, m := range msgs {
			cs, err := trace.Decode(string(m.Body))
			if err != nil {
				t.Errorf("official trace data %q: %v", m.Body, err)
				continue
			}
			for _, c := range cs {
				records[c.Beans[0].MsgID] = append(records[c.Beans[0].MsgID], c)
			}
		}
		return ourconsumer.Success, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer reader.Shutdown(context.Background())
	has := func(cs []trace.Context, typ trace.Type) bool {
		return slices.ContainsFunc(cs, func(c trace.Context) bool { return c.Type == typ })
	}
	// The official client sends its records about every second.
	testutil.WaitFor(t, 30*time.Second, "Pub, SubBefore and SubAfter of both messages", func() bool {
		rmu.Lock()
		defer rmu.Unlock()
		for _, id := range ids {
			cs := records[id]
			if !has(cs, trace.Pub) || !has(cs, trace.SubBefore) || !has(cs, trace.SubAfter) {
				return false
			}
		}
		return true
	})
	rmu.Lock()
	defer rmu.Unlock()
	for i, id := range ids {
		for _, c := range records[id] {
			b := c.Beans[0]
			switch c.Type {
			case trace.Pub:
				if c.Group != pg || b.Topic != topic || b.Tags != "TagT" || b.Keys != fmt.Sprintf("key-%d", i) || !c.Success ||
					b.OffsetMsgID == "" || b.StoreHost == "" || b.ClientHost == "" || b.BodyLength != len(fmt.Sprintf("body-%d", i)) {
					t.Errorf("%s: Pub %+v", id, c)
				}
			case trace.SubBefore:
				if c.Group != cg || c.RequestID == "" || b.Keys != fmt.Sprintf("key-%d", i) {
					t.Errorf("%s: SubBefore %+v", id, c)
				}
			case trace.SubAfter:
				if c.Group != cg || c.RequestID == "" || !c.Success || c.CostTime < 0 {
					t.Errorf("%s: SubAfter %+v", id, c)
				}
			}
		}
	}
}
