package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/promtext"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// -metrics serves the brokers' metrics in the Prometheus text format on
// loopback; a stored send shows in the scrape.
func TestServeMetrics(t *testing.T) {
	o, err := parseFlags([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", t.TempDir(), "-brokers", "2",
		"-segment-size", "1048576", "-metrics", ":0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.metrics != "127.0.0.1:0" {
		t.Fatalf("-metrics :0 became %q, want loopback", o.metrics)
	}
	addrs, stop := startServe(t, o)
	defer stop()
	if !strings.HasPrefix(addrs["metrics"], "127.0.0.1:") {
		t.Fatalf("metrics listening on %q", addrs["metrics"])
	}
	ctx := context.Background()
	if err := rmqtest.CreateTopic(ctx, addrs["namesrv"], "MetricsTopic", 2, rmqtest.TopicOnBrokers("broker-b")); err != nil {
		t.Fatal(err)
	}
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	h := remoting.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "MetricsTopic", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli()}
	for range 3 {
		resp, err := cli.Invoke(ctx, addrs["broker-b"], remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), []byte("hello")))
		if err != nil || resp.Code != remoting.Success {
			t.Fatalf("send: %v %+v", err, resp)
		}
	}

	res, err := http.Get("http://" + addrs["metrics"] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != promtext.ContentType {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	got, err := promtext.Parse(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]float64{
		`rocketmq_broker_messages_in_total{broker="broker-b",topic="MetricsTopic"}`: 3,
		`rocketmq_broker_long_poll_held{broker="broker-a"}`:                         0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	if v := got[`rocketmq_broker_connections{broker="broker-b"}`]; v < 1 {
		t.Errorf("broker-b has %v connections open, want the sender's at least", v)
	}
	if v := got[`rocketmq_broker_commitlog_bytes{broker="broker-b"}`]; v <= 0 {
		t.Errorf("broker-b CommitLog bytes %v after three sends", v)
	}
	if _, ok := got[`rocketmq_broker_messages_in_total{broker="broker-a",topic="MetricsTopic"}`]; ok {
		t.Errorf("broker-a counts sends it never stored")
	}
}
