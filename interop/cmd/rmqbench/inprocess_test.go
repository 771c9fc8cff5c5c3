package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
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
		tests = append(tests, tc{client, modeConsume + "-orderly", []string{"-orderly", "-queues", "8", "-backlog", "400", "-batch", "16", "-duration", "30s"}})
	}
	tests = append(tests,
		tc{clientOfficial, modeConsume + "-inprocess", []string{"-backlog", "100", "-broker", brokerInProcess}},
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
