// Package leaksuite checks that every public type's Shutdown or Close
// stops every goroutine the type started: producers plain and
// transactional, push consumers concurrent and orderly, the lite pull
// consumer, the admin client and the rmqtest cluster itself. It needs the
// in-process cluster and skips when ROCKETMQ_NAMESRV is set.
package leaksuite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// settle bounds how long goroutines may take to end after Shutdown or
// Close returned (a connection's reader seeing its close, a timer that
// already fired).
const settle = 10 * time.Second

// goroutines returns the stacks of the live goroutines by id, leaving out
// those of the testing package (test runners, the alarm).
func goroutines() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[int]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		var id int
		if _, err := fmt.Sscanf(string(g), "goroutine %d ", &id); err != nil {
			continue
		}
		s := string(g)
		if strings.Contains(s, "testing.tRunner") || strings.Contains(s, "testing.(*M).") || strings.Contains(s, "testing.runTests") {
			continue
		}
		out[id] = s
	}
	return out
}

// serverSide tells the goroutines of the in-process servers: their worker
// pools grow and shrink with the load the clients bring, apart from any
// client's lifetime; the cluster's own check covers them.
func serverSide(stack string) bool {
	for _, pkg := range []string{"rocketmq/internal/server.", "rocketmq/internal/broker.", "rocketmq/internal/namesrv.",
		"rocketmq/internal/store.", "panjf2000/gnet"} {
		if strings.Contains(stack, pkg) {
			return true
		}
	}
	return false
}

// leaked returns the stacks of goroutines not in before still alive after
// settle (or at once with wait false), the servers' own left out unless
// servers is set.
func leaked(before map[int]string, wait, servers bool) []string {
	var extra []string
	check := func() bool {
		extra = extra[:0]
		for id, s := range goroutines() {
			if _, ok := before[id]; !ok && (servers || !serverSide(s)) {
				extra = append(extra, s)
			}
		}
		return len(extra) == 0
	}
	if wait {
		testutil.Poll(settle, check)
	} else {
		check()
	}
	slices.Sort(extra)
	return extra
}

func noLeak(t *testing.T, before map[int]string, what string, servers bool) {
	t.Helper()
	if extra := leaked(before, true, servers); len(extra) > 0 {
		t.Errorf("%d goroutines left behind by %s, e.g.:\n%s", len(extra), what, extra[0])
	}
}

type txListener struct{}

func (txListener) ExecuteLocal(context.Context, *rocketmq.Message, any) producer.LocalState {
	return producer.LocalCommit
}
func (txListener) CheckLocal(context.Context, *rocketmq.MessageExt) producer.LocalState {
	return producer.LocalCommit
}

func TestShutdownLeavesNoGoroutine(t *testing.T) {
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		t.Skip("checks the in-process cluster's Close too (ROCKETMQ_NAMESRV is set)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := goroutines()
	cl, err := rmqtest.NewCluster(rmqtest.WithStoreDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = cl.Close(context.Background())
		}
	}()
	ns := cl.NameServerAddr()
	topic := "LeakTopic"
	if err := cl.CreateTopic(ctx, topic, 2); err != nil {
		t.Fatal(err)
	}
	send := func(t *testing.T, body string) {
		t.Helper()
		p, err := producer.New(producer.WithGroup("pg_leak_feed"), producer.WithNameServers(ns))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer p.Shutdown(ctx)
		if _, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("detects a leak", func(t *testing.T) {
		// A started producer not shut down must be reported.
		before := goroutines()
		p, err := producer.New(producer.WithGroup("pg_leak_control"), producer.WithNameServers(ns))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("control")}); err != nil {
			t.Fatal(err)
		}
		if len(leaked(before, false, false)) == 0 {
			t.Error("a running producer's goroutines were not noticed")
		}
		if err := p.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		noLeak(t, before, "a producer after Shutdown", false)
	})

	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"producer", func(t *testing.T) {
			p, err := producer.New(producer.WithGroup("pg_leak"), producer.WithNameServers(ns))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("sync")}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			if err := p.SendAsync(ctx, func(_ *rocketmq.SendResult, err error) {
				defer wg.Done()
				if err != nil {
					t.Error(err)
				}
			}, &rocketmq.Message{Topic: topic, Body: []byte("async")}); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if err := p.SendOneway(ctx, &rocketmq.Message{Topic: topic, Body: []byte("oneway")}); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"transactional producer", func(t *testing.T) {
			p, err := producer.NewTransactional(txListener{}, producer.WithGroup("pg_leak_tx"), producer.WithNameServers(ns))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := p.SendInTransaction(ctx, &rocketmq.Message{Topic: topic, Body: []byte("tx")}, nil); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"push consumer", func(t *testing.T) {
			got := make(chan struct{}, 1)
			c, err := consumer.NewPush(consumer.WithGroup("cg_leak_push"), consumer.WithNameServers(ns), consumer.WithConsumeFrom(consumer.FromFirst))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Subscribe(topic, consumer.Tags("*"), func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
				select {
				case got <- struct{}{}:
				default:
				}
				return consumer.Success, nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			send(t, "push")
			<-got
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"orderly push consumer", func(t *testing.T) {
			got := make(chan struct{}, 1)
			c, err := consumer.NewPush(consumer.WithGroup("cg_leak_orderly"), consumer.WithNameServers(ns), consumer.WithConsumeFrom(consumer.FromFirst))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.SubscribeOrderly(topic, consumer.Tags("*"), func(context.Context, []*rocketmq.MessageExt) (consumer.OrderlyResult, error) {
				select {
				case got <- struct{}{}:
				default:
				}
				return consumer.OrderlySuccess, nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			send(t, "orderly")
			<-got
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"lite pull consumer", func(t *testing.T) {
			c, err := consumer.NewPull(consumer.WithGroup("cg_leak_pull"), consumer.WithNameServers(ns), consumer.WithConsumeFrom(consumer.FromFirst))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Subscribe(topic, consumer.Tags("*")); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			send(t, "pull")
			testutil.WaitFor(t, 30*time.Second, "a polled message", func() bool {
				pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				msgs, _ := c.Poll(pctx)
				return len(msgs) > 0
			})
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"admin", func(t *testing.T) {
			a, err := admin.New(admin.WithNameServers(ns))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := a.ClusterInfo(ctx); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := goroutines()
			tc.run(t)
			noLeak(t, before, tc.name+" after Shutdown", false)
		})
	}

	t.Run("rmqtest cluster", func(t *testing.T) {
		closed = true
		if err := cl.Close(ctx); err != nil {
			t.Fatal(err)
		}
		noLeak(t, start, "the cluster after Close", true)
	})
}
