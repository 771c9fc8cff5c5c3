package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestInProcessCluster runs rmqbench as a user would, without -namesrv:
// each client against our NameServer and broker (rmqtest, in a child
// process unless -broker inprocess), every mode the client has. Consume
// mode must get back exactly what it preloaded plus the warm-up message;
// e2e mode must receive what it offered, with latencies.
func TestInProcessCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and the official client")
	}
	type tc struct {
		client, mode string
		args         []string
	}
	var tests []tc
	for _, client := range []string{clientOfficial, clientOurs} {
		tests = append(tests,
			tc{client, modeSync, nil},
			tc{client, modeAsync, []string{"-window", "8"}},
			tc{client, modeOneway, nil},
			tc{client, modeBatch, []string{"-batch", "8"}},
			tc{client, modeSync + "-flush", []string{"-flush"}},
		)
	}
	for _, client := range []string{clientOfficial, clientOurs} {
		tests = append(tests,
			tc{client, modeConsume, []string{"-backlog", "400", "-batch", "16", "-duration", "30s"}},
			tc{client, modeE2E, []string{"-rate", "500"}},
		)
	}
	// Orderly consumers drain a topic of 8 queues. The official client's
	// orderly consumer races with itself (its process queue's message
	// tree is read unlocked), which the race detector reports.
	orderly := []string{clientOurs}
	if !raceEnabled {
		orderly = append(orderly, clientOfficial)
	}
	for _, client := range orderly {
		tests = append(tests,
			tc{client, modeConsume + "-orderly", []string{"-orderly", "-queues", "8", "-backlog", "400", "-batch", "16", "-duration", "30s"}},
			tc{client, modeE2E + "-orderly", []string{"-orderly", "-queues", "8", "-rate", "500"}},
		)
	}
	// The official push consumer's Shutdown writes a field its own
	// rebalance goroutine reads unlocked (rmqClient.Shutdown against
	// InvokeSync), which a short run under the race detector can hit: ours
	// covers the in-process broker there.
	inProcessClient := clientOfficial
	if raceEnabled {
		inProcessClient = clientOurs
	}
	tests = append(tests,
		tc{inProcessClient, modeConsume + "-inprocess", []string{"-backlog", "100", "-broker", brokerInProcess}},
		tc{clientFloor, modeConsume, []string{"-backlog", "400", "-batch", "16", "-callers", "3"}},
	)
	for _, tt := range tests {
		t.Run(tt.client+"/"+tt.mode, func(t *testing.T) {
			mode, variant, _ := strings.Cut(tt.mode, "-")
			args := append([]string{"-client", tt.client, "-mode", mode, "-callers", "2", "-size", "256", "-duration", "300ms"}, tt.args...)
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, errOut.String())
			}
			var r result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("stdout %q: %v", out.String(), err)
			}
			if r.Client != tt.client || r.Mode != mode || r.Msgs == 0 || r.Errors != 0 || r.MsgsPerS <= 0 {
				t.Fatalf("result %+v\nstderr: %s", r, errOut.String())
			}
			// The broker's CPU is measured apart only in its own process.
			if inProcess := variant == brokerInProcess; (r.BrokerCPUusMsg > 0) == inProcess || r.ClientCPUusMsg <= 0 {
				t.Fatalf("cpu per message: client %v broker %v (broker in process: %v)", r.ClientCPUusMsg, r.BrokerCPUusMsg, inProcess)
			}
			switch {
			case (variant == "orderly") != r.Orderly:
				t.Fatalf("result %+v: orderly %v, want %v", r, r.Orderly, variant == "orderly")
			case variant == "orderly" && r.Queues != 8, variant != "orderly" && r.Queues != defaultQueues:
				t.Fatalf("result %+v: queues %d", r, r.Queues)
			case mode == modeConsume && (variant == "" || variant == "orderly") && r.Msgs != 401:
				t.Fatalf("consumed %d messages, want the 400 preloaded + 1 warm-up", r.Msgs)
			case mode == modeE2E && (r.Rate != 500 || r.Msgs != 150 || r.P50us <= 0 || r.P99us < r.P50us):
				t.Fatalf("e2e result %+v", r)
			}
		})
	}
}

// TestQueuesWithNameServer runs an orderly drain against a cluster reached
// by -namesrv: -queues must create the topic there with that many queues,
// which the NameServer's route then shows.
func TestQueuesWithNameServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	c := rmqtest.StartCluster(t)
	const topic = "rmqbench_queues"
	args := []string{"-namesrv", c.NameServerAddr(), "-client", clientOurs, "-mode", modeConsume, "-orderly",
		"-queues", "6", "-topic", topic, "-backlog", "60", "-batch", "4", "-callers", "2", "-size", "64", "-duration", "30s"}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errOut.String())
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if !r.Orderly || r.Queues != 6 || r.Msgs != 61 {
		t.Fatalf("result %+v, want orderly, 6 queues, 61 messages", r)
	}
	cfg := mqclient.DefaultConfig()
	cfg.NameServers = []string{c.NameServerAddr()}
	cli, err := mqclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.InvokeNameServer(ctx, func() *remoting.Command {
		h := remoting.GetRouteInfoRequestHeader{Topic: topic}
		return remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil)
	})
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("route of %s: %v %v", topic, resp, err)
	}
	var route remoting.TopicRouteData
	if err := route.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("route %q: %v", resp.Body, err)
	}
	if len(route.QueueDatas) != 1 || route.QueueDatas[0].WriteQueueNums != 6 || route.QueueDatas[0].ReadQueueNums != 6 {
		t.Fatalf("route %q: want one broker with 6 read and write queues", resp.Body)
	}
}
