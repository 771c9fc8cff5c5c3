package broker

import (
	"bytes"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/promtext"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// scrape collects b's metrics, writes them and parses them back.
func scrape(t *testing.T, b *Broker) map[string]float64 {
	t.Helper()
	var s promtext.Set
	b.CollectMetrics(&s)
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := promtext.Parse(&buf)
	if err != nil {
		t.Fatalf("%v in\n%s", err, buf.String())
	}
	return got
}

// Sends stored and refused, pulls answered and held, and connections show
// in the broker's metrics under their topic and response code.
func TestCollectMetrics(t *testing.T) {
	e := pullTestBroker(t, func(c *Config) { c.BrokerName = "broker-m"; c.MaxMessageSize = 1024 })
	e.b.topics.ensure("MT", 2, rocketmq.PermRead|rocketmq.PermWrite)
	for range 3 {
		if resp := e.invoke(t, sendV2Req(sendTestHeader("MT", 0, ""), []byte("hello"))); resp.Code != remoting.Success {
			t.Fatalf("send: %d %s", resp.Code, resp.Remark)
		}
	}
	if resp := e.invoke(t, sendV2Req(sendTestHeader("MT", 0, ""), make([]byte, 2048))); resp.Code != remoting.MessageIllegal {
		t.Fatalf("oversized send answered %d", resp.Code)
	}
	resp := e.invoke(t, pullArgs{group: "g", topic: "MT", queue: 0, sub: pstr("*")}.req())
	pullExpect(t, resp, remoting.Success, "FOUND", 3, 0, 3)
	outBytes := len(resp.Body)
	held := e.invokeAsync(t, pullArgs{group: "g", topic: "MT", queue: 1, sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 20000}.req())
	testutil.WaitFor(t, 5*time.Second, "a held pull", func() bool { return e.b.pulls.held.Load() == 1 })

	got := scrape(t, e.b)
	for key, want := range map[string]float64{
		`rocketmq_broker_messages_in_total{broker="broker-m",topic="MT"}`:               3,
		`rocketmq_broker_messages_out_total{broker="broker-m",topic="MT"}`:              3,
		`rocketmq_broker_bytes_out_total{broker="broker-m",topic="MT"}`:                 float64(outBytes),
		`rocketmq_broker_sends_refused_total{broker="broker-m",code="MESSAGE_ILLEGAL"}`: 1,
		`rocketmq_broker_pulls_total{broker="broker-m",code="SUCCESS"}`:                 1,
		`rocketmq_broker_long_poll_holds_total{broker="broker-m"}`:                      1,
		`rocketmq_broker_long_poll_held{broker="broker-m"}`:                             1,
		`rocketmq_broker_connections{broker="broker-m"}`:                                1,
		`rocketmq_broker_connections_opened_total{broker="broker-m"}`:                   1,
		`rocketmq_broker_messages_stored_total{broker="broker-m"}`:                      3,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	if v := got[`rocketmq_broker_bytes_in_total{broker="broker-m",topic="MT"}`]; v <= 3*5 {
		t.Errorf("bytes in %v: less than the bodies", v)
	}
	if v := got[`rocketmq_broker_commitlog_bytes{broker="broker-m"}`]; v != got[`rocketmq_broker_bytes_in_total{broker="broker-m",topic="MT"}`] {
		t.Errorf("CommitLog bytes %v, want the bytes of the three sends", v)
	}
	if _, ok := got[`rocketmq_broker_pulls_total{broker="broker-m",code="PULL_NOT_FOUND"}`]; ok {
		t.Errorf("a held pull counted before it was answered")
	}

	// The held pull is answered by a new message: counted once, as found.
	if resp := e.invoke(t, sendV2Req(sendTestHeader("MT", 1, ""), []byte("wake"))); resp.Code != remoting.Success {
		t.Fatalf("send: %d %s", resp.Code, resp.Remark)
	}
	if r := pullWait(t, held, 5*time.Second); r.err != nil || r.resp.Code != remoting.Success {
		t.Fatalf("held pull: %+v", r)
	}
	got = scrape(t, e.b)
	if v := got[`rocketmq_broker_pulls_total{broker="broker-m",code="SUCCESS"}`]; v != 2 {
		t.Errorf("pulls found %v, want 2", v)
	}
	if v := got[`rocketmq_broker_long_poll_held{broker="broker-m"}`]; v != 0 {
		t.Errorf("held %v after the answer", v)
	}
}
