package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// nsTopics lists the topics the NameServer at ns routes.
func nsTopics(t *testing.T, ns string) map[string]bool {
	t.Helper()
	cli := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, ns, remoting.NewRequest(remoting.GetAllTopicListFromNameServer, nil, nil))
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("topic list: %v %v", err, resp)
	}
	var tl remoting.TopicList
	if err := tl.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("topic list: %v", err)
	}
	out := make(map[string]bool, len(tl.TopicList))
	for _, name := range tl.TopicList {
		out[name] = true
	}
	return out
}

// Thousands of concurrent topic creates share registrations: never more
// than one REGISTER_BROKER round in flight, and the last round carries
// every topic.
func TestRegistrationStormCoalesced(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("compressed=%v", compressed), func(t *testing.T) {
			ns := startNameServer(t)
			b := startBroker(t, Config{
				StoreDir:           t.TempDir(),
				ListenAddr:         "127.0.0.1:0",
				NameServers:        []string{ns},
				RegisterInterval:   time.Hour,
				CompressedRegister: compressed,
			})
			startRounds := b.reg.rounds.Load()
			const topics, workers = 2000, 50
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < topics; i += workers {
						// What topicManager.changed does after each
						// create, without the topics.json rewrite this
						// test does not measure.
						tc := remoting.NewTopicConfig(fmt.Sprintf("Storm%04d", i))
						tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm = 4, 4, rocketmq.PermRead|rocketmq.PermWrite
						b.topics.set(tc.TopicName, tc)
						b.registerAsync()
					}
				}()
			}
			wg.Wait()
			var missing []string
			if !testutil.Poll(30*time.Second, func() bool {
				have := nsTopics(t, ns)
				missing = missing[:0]
				for i := range topics {
					if name := fmt.Sprintf("Storm%04d", i); !have[name] {
						missing = append(missing, name)
					}
				}
				return len(missing) == 0
			}) {
				t.Fatalf("%d topics not routable, e.g. %v", len(missing), missing[:min(5, len(missing))])
			}
			if m := b.reg.maxInFlight.Load(); m != 1 {
				t.Errorf("%d registration rounds in flight at once, want 1", m)
			}
			rounds := b.reg.rounds.Load() - startRounds
			if rounds > topics/4 {
				t.Errorf("%d registration rounds for %d topic creates: changes were not coalesced", rounds, topics)
			}
			t.Logf("%d topic creates, %d registration rounds", topics, rounds)
		})
	}
}
