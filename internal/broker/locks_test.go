package broker

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func lockMQs(ids ...int) []rocketmq.MessageQueue {
	mqs := make([]rocketmq.MessageQueue, len(ids))
	for i, id := range ids {
		mqs[i] = rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: id}
	}
	return mqs
}

// lockReq is LOCK_BATCH_MQ or UNLOCK_BATCH_MQ for clientID in group g.
func lockReq(code int32, clientID string, mqs []rocketmq.MessageQueue) *remoting.Command {
	body := remoting.LockBatchRequestBody{ConsumerGroup: "g", ClientID: clientID, MQSet: mqs}
	return remoting.NewRequest(code, nil, body.AppendJSON(nil, remoting.JSONFastjson))
}

// lockBatch locks mqs for p (its id as client id) and returns the queue
// ids granted, sorted.
func lockBatch(t testing.TB, p *clientsPeer, mqs []rocketmq.MessageQueue) []int {
	t.Helper()
	resp := p.invoke(t, lockReq(remoting.LockBatchMQ, p.id, mqs))
	if resp.Code != remoting.Success {
		t.Fatalf("%s: lock answered %d %q", p.id, resp.Code, resp.Remark)
	}
	var body remoting.LockBatchResponseBody
	if err := body.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("%s: lock response body %q: %v", p.id, resp.Body, err)
	}
	ids := []int{}
	for _, mq := range body.LockOKMQSet {
		ids = append(ids, mq.QueueID)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

func unlockBatch(t testing.TB, p *clientsPeer, mqs []rocketmq.MessageQueue) {
	t.Helper()
	resp := p.invoke(t, lockReq(remoting.UnlockBatchMQ, p.id, mqs))
	if resp.Code != remoting.Success || len(resp.Body) != 0 {
		t.Fatalf("%s: unlock answered %d %q body %q", p.id, resp.Code, resp.Remark, resp.Body)
	}
}

func wantIDs(t testing.TB, what string, got []int, want ...int) {
	t.Helper()
	if want == nil {
		want = []int{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: granted %v, want %v", what, got, want)
	}
}

func TestLockConflictRenewUnlock(t *testing.T) {
	b := clientsTestBroker(t, nil)
	a, c := clientsNewPeer(t, b, "10.0.0.1@a"), clientsNewPeer(t, b, "10.0.0.2@c")

	wantIDs(t, "a locks 0,1", lockBatch(t, a, lockMQs(0, 1, 1)), 0, 1)
	wantIDs(t, "c asks 0..3", lockBatch(t, c, lockMQs(0, 1, 2, 3)), 2, 3)
	wantIDs(t, "a renews and asks 2", lockBatch(t, a, lockMQs(0, 1, 2)), 0, 1)

	// c's unlock of a's queue changes nothing; a's own unlock frees it.
	unlockBatch(t, c, lockMQs(0))
	wantIDs(t, "c after its unlock of 0", lockBatch(t, c, lockMQs(0)))
	unlockBatch(t, a, lockMQs(0))
	wantIDs(t, "c after a's unlock of 0", lockBatch(t, c, lockMQs(0)), 0)
	if got := b.locks.holder("g", lockMQs(1)[0]); got != a.id {
		t.Fatalf("queue 1 held by %q, want %q", got, a.id)
	}
	// Another group's locks are separate.
	body := remoting.LockBatchRequestBody{ConsumerGroup: "other", ClientID: c.id, MQSet: lockMQs(1)}
	resp := c.invoke(t, remoting.NewRequest(remoting.LockBatchMQ, nil, body.AppendJSON(nil, remoting.JSONFastjson)))
	var rb remoting.LockBatchResponseBody
	if err := rb.DecodeJSON(resp.Body); err != nil || len(rb.LockOKMQSet) != 1 {
		t.Fatalf("other group lock: %d %q %v", resp.Code, resp.Body, err)
	}
}

func TestLockExpiry(t *testing.T) {
	const live = 500 * time.Millisecond
	b := clientsTestBroker(t, func(c *Config) { c.LockMaxLiveTime = live })
	a, c := clientsNewPeer(t, b, "10.0.0.1@a"), clientsNewPeer(t, b, "10.0.0.2@c")

	start := time.Now()
	wantIDs(t, "a locks 0", lockBatch(t, a, lockMQs(0)), 0)
	testutil.WaitFor(t, 10*time.Second, "a's lock to expire", func() bool {
		return len(lockBatch(t, c, lockMQs(0))) == 1
	})
	if held := time.Since(start); held < live {
		t.Fatalf("c got the queue after %v, before the %v lock lifetime", held, live)
	}
	wantIDs(t, "a after expiry", lockBatch(t, a, lockMQs(0)))

	// Renewals within the lifetime keep the queue.
	for end := time.Now().Add(2 * live); time.Now().Before(end); {
		wantIDs(t, "c renews", lockBatch(t, c, lockMQs(0)), 0)
		wantIDs(t, "a while c renews", lockBatch(t, a, lockMQs(0)))
	}
}

func TestLockReleaseOnUnregisterNotDisconnect(t *testing.T) {
	b := clientsTestBroker(t, nil)
	a, c := clientsNewPeer(t, b, "10.0.0.1@a"), clientsNewPeer(t, b, "10.0.0.2@c")
	subs := map[string]string{"T": "*"}
	a.heartbeat(t, "g", remoting.MessageModelClustering, subs)
	wantIDs(t, "a locks", lockBatch(t, a, lockMQs(0, 1)), 0, 1)
	a.unregister(t, "", "other")
	wantIDs(t, "c after a left another group", lockBatch(t, c, lockMQs(0, 1)))
	a.unregister(t, "", "g")
	wantIDs(t, "c after a unregistered", lockBatch(t, c, lockMQs(0, 1)), 0, 1)

	// A closed connection keeps the locks, as Java does: the client may
	// reconnect and still consume.
	c.heartbeat(t, "g", remoting.MessageModelClustering, subs)
	c.cli.Close()
	testutil.WaitFor(t, 10*time.Second, "c's connection to be dropped", func() bool {
		return b.clients.consumerConn("g", c.id) == nil
	})
	d := clientsNewPeer(t, b, "10.0.0.3@d")
	wantIDs(t, "d after c disconnected", lockBatch(t, d, lockMQs(0, 1)))
}

func TestLockTableBound(t *testing.T) {
	const live = 200 * time.Millisecond
	b := clientsTestBroker(t, func(c *Config) { c.LockTableMax = 4; c.LockMaxLiveTime = live })
	a, c := clientsNewPeer(t, b, "10.0.0.1@a"), clientsNewPeer(t, b, "10.0.0.2@c")
	wantIDs(t, "a asks 6", lockBatch(t, a, lockMQs(0, 1, 2, 3, 4, 5)), 0, 1, 2, 3)
	wantIDs(t, "c with the table full", lockBatch(t, c, lockMQs(6)))
	wantIDs(t, "a renews within the bound", lockBatch(t, a, lockMQs(0, 1, 2, 3)), 0, 1, 2, 3)
	// Expired entries make room.
	testutil.WaitFor(t, 10*time.Second, "room after expiry", func() bool {
		return len(lockBatch(t, c, lockMQs(6))) == 1
	})
	b.locks.mu.Lock()
	size := b.locks.size
	b.locks.mu.Unlock()
	if size > 4 {
		t.Fatalf("lock table holds %d entries, bound 4", size)
	}
}

func TestLockBadInput(t *testing.T) {
	b := clientsTestBroker(t, nil)
	a := clientsNewPeer(t, b, "10.0.0.1@a")
	noGroup := remoting.LockBatchRequestBody{ClientID: "x", MQSet: lockMQs(0)}
	noClient := remoting.LockBatchRequestBody{ConsumerGroup: "g", MQSet: lockMQs(0)}
	for _, code := range []int32{remoting.LockBatchMQ, remoting.UnlockBatchMQ} {
		tests := []struct {
			name string
			body []byte
			code int32
		}{
			{"no body", nil, remoting.SystemError},
			{"bad json", []byte(`{"mqSet":[`), remoting.SystemError},
			{"wrong type", []byte(`{"consumerGroup":"g","clientId":"x","mqSet":7}`), remoting.SystemError},
			{"no group", noGroup.AppendJSON(nil, remoting.JSONFastjson), remoting.SystemError},
			{"no client", noClient.AppendJSON(nil, remoting.JSONFastjson), remoting.SystemError},
			{"empty set", []byte(`{"consumerGroup":"g","clientId":"x","mqSet":[]}`), remoting.Success},
		}
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%d/%s", code, tc.name), func(t *testing.T) {
				resp := a.invoke(t, remoting.NewRequest(code, nil, tc.body))
				if resp.Code != tc.code {
					t.Fatalf("got %d %q, want %d", resp.Code, resp.Remark, tc.code)
				}
			})
		}
	}
	// The broker still serves.
	wantIDs(t, "after bad input", lockBatch(t, a, lockMQs(0)), 0)
}

// TestLockCapturedFrames replays the captured LOCK_BATCH_MQ and
// UNLOCK_BATCH_MQ requests of the Java orderly consumer (JSON and
// ROCKETMQ headers) in capture order and compares the answers, bodies
// included, with the 4.9.8 broker's.
func TestLockCapturedFrames(t *testing.T) {
	frames, load := clientsReadWire(t)
	b := clientsTestBroker(t, nil)
	keep := func(f clientsWireFrame) bool {
		return f.Code == remoting.LockBatchMQ || f.Code == remoting.UnlockBatchMQ
	}
	replayed := clientsReplay(t, b, frames, load, keep, func(i int, _, resp, want *remoting.Command, _ []*remoting.Command) {
		if resp.Code != want.Code || resp.Remark != want.Remark || resp.Serialize != want.Serialize ||
			len(resp.Ext) != len(want.Ext) || string(resp.Body) != string(want.Body) {
			t.Errorf("%s: answered %d %q serialize %d ext %v body %s; captured %d %q %d %v %s", frames[i].File,
				resp.Code, resp.Remark, resp.Serialize, resp.Ext, resp.Body,
				want.Code, want.Remark, want.Serialize, want.Ext, want.Body)
		}
	})
	if replayed[remoting.LockBatchMQ] == 0 || replayed[remoting.UnlockBatchMQ] == 0 {
		t.Fatalf("replayed %v: captured lock frames missing", replayed)
	}
}
