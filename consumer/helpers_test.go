package consumer

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// envExternal points the tests that can run against an external cluster
// at it; those that need our broker's controls skip.
const envExternal = "ROCKETMQ_NAMESRV"

type env struct {
	ns      string
	cluster *rmqtest.Cluster // nil for an external cluster
}

func newEnv(t *testing.T, opts ...rmqtest.Option) *env {
	t.Helper()
	e := &env{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		e.cluster = rmqtest.StartCluster(t, opts...)
		e.ns = e.cluster.NameServerAddr()
	}
	return e
}

// ours skips t against an external cluster.
func (e *env) ours(t *testing.T, why string) {
	t.Helper()
	if e.cluster == nil {
		t.Skip("needs the in-process broker (" + why + "); " + envExternal + " is set")
	}
}

var topicSeq atomic.Int64

func (e *env) topic(t *testing.T, queues int) string {
	t.Helper()
	topic := fmt.Sprintf("CT_%d_%d", time.Now().UnixNano()%1e9, topicSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, e.ns, topic, queues); err != nil {
		t.Fatal(err)
	}
	return topic
}

func groupName(t *testing.T) string {
	r := strings.NewReplacer("/", "_", " ", "_", "#", "_")
	return fmt.Sprintf("cg_%s_%d", r.Replace(t.Name()), topicSeq.Add(1))
}

func (e *env) producer(t *testing.T) *producer.Producer {
	t.Helper()
	p, err := producer.New(producer.WithNameServers(e.ns), producer.WithGroup(groupName(t)+"_p"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// send sends n messages to topic with bodies "<prefix>-<i>" and the tag,
// returning their bodies.
func send(t *testing.T, p *producer.Producer, topic, prefix, tag string, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("%s-%d", prefix, i)
		opts := []producer.MessageOption{}
		if tag != "" {
			opts = append(opts, producer.Tag(tag))
		}
		m, err := producer.NewMessage(topic, []byte(body), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
	}
	return out
}

// newConsumer makes a consumer with test-friendly periods.
func (e *env) newConsumer(t *testing.T, group string, opts ...Option) *PushConsumer {
	t.Helper()
	logs := &testlog.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("consumer %s logs:\n%s", group, logs.String())
		}
	})
	base := []Option{
		WithNameServers(e.ns), WithGroup(group), WithConsumeFrom(FromFirst),
		WithRebalanceInterval(time.Second), WithOffsetPersistInterval(200 * time.Millisecond),
		WithLogger(logs.Logger()),
	}
	c, err := NewPush(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, c *PushConsumer) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
}

// recorder collects consumed bodies.
type recorder struct {
	mu     sync.Mutex
	bodies map[string]int
	msgs   []*rocketmq.MessageExt
}

func newRecorder() *recorder { return &recorder{bodies: map[string]int{}} }

func (r *recorder) handler(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		r.bodies[string(m.Body)]++
		r.msgs = append(r.msgs, m)
	}
	return Success, nil
}

func (r *recorder) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *recorder) count(body string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[body]
}
