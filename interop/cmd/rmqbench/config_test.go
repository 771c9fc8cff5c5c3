package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, c config)
	}{
		{name: "defaults", check: func(t *testing.T, c config) {
			if c.client != "official" || c.mode != "sync" || c.callers != 1 || c.size != 1024 ||
				c.duration != 10*time.Second || c.topic != "rmqbench" || c.namesrv != "" || c.flush {
				t.Fatalf("defaults %+v", c)
			}
		}},
		{name: "all flags", args: []string{"-namesrv", "127.0.0.1:9876", "-client", "ours", "-mode", "batch",
			"-callers", "8", "-batch", "16", "-size", "100", "-duration", "2s", "-topic", "T"},
			check: func(t *testing.T, c config) {
				if c.namesrv != "127.0.0.1:9876" || c.client != "ours" || c.mode != "batch" || c.callers != 8 ||
					c.batch != 16 || c.size != 100 || c.duration != 2*time.Second || c.topic != "T" {
					t.Fatalf("parsed %+v", c)
				}
			}},
		{name: "consume gets a fresh topic", args: []string{"-mode", "consume"}, check: func(t *testing.T, c config) {
			if !strings.HasPrefix(c.topic, "rmqbench_") {
				t.Fatalf("topic %q", c.topic)
			}
		}},
		{name: "consume keeps an explicit topic", args: []string{"-mode", "consume", "-topic", "T"}, check: func(t *testing.T, c config) {
			if c.topic != "T" {
				t.Fatalf("topic %q", c.topic)
			}
		}},
		{name: "e2e gets a fresh topic and a rate", args: []string{"-mode", "e2e", "-rate", "500"}, check: func(t *testing.T, c config) {
			if !strings.HasPrefix(c.topic, "rmqbench_") || c.rate != 500 {
				t.Fatalf("topic %q rate %d", c.topic, c.rate)
			}
		}},
		{name: "broker in a child process by default", check: func(t *testing.T, c config) {
			if c.broker != brokerChild || c.bprof != "" {
				t.Fatalf("broker %q profile %q", c.broker, c.bprof)
			}
		}},
		{name: "broker in process", args: []string{"-broker", "inprocess"}, check: func(t *testing.T, c config) {
			if c.broker != brokerInProcess {
				t.Fatalf("broker %q", c.broker)
			}
		}},
		{name: "bad broker", args: []string{"-broker", "remote"}, wantErr: "-broker"},
		{name: "consume batch", args: []string{"-mode", "consume", "-consume-batch", "32"}, check: func(t *testing.T, c config) {
			if c.cbatch != 32 {
				t.Fatalf("consume batch %d", c.cbatch)
			}
		}},
		{name: "orderly consume on 8 queues", args: []string{"-mode", "consume", "-orderly", "-queues", "8", "-client", "ours"}, check: func(t *testing.T, c config) {
			if !c.orderly || c.queues != 8 {
				t.Fatalf("orderly %v queues %d", c.orderly, c.queues)
			}
		}},
		{name: "orderly e2e", args: []string{"-mode", "e2e", "-orderly"}, check: func(t *testing.T, c config) {
			if !c.orderly || c.queues != 0 {
				t.Fatalf("orderly %v queues %d", c.orderly, c.queues)
			}
		}},
		{name: "orderly send", args: []string{"-mode", "sync", "-orderly"}, wantErr: "-orderly"},
		{name: "orderly floor", args: []string{"-mode", "consume", "-client", "floor", "-orderly"}, wantErr: "-orderly"},
		{name: "negative queues", args: []string{"-queues", "-1"}, wantErr: "-queues"},
		{name: "too many queues", args: []string{"-queues", "1025"}, wantErr: "-queues"},
		{name: "bad consume batch", args: []string{"-consume-batch", "-1"}, wantErr: "-consume-batch"},
		{name: "zero rate", args: []string{"-mode", "e2e", "-rate", "0"}, wantErr: "-rate"},
		{name: "broker profile with namesrv", args: []string{"-broker-cpuprofile", "p", "-namesrv", "h:1"}, wantErr: "-broker-cpuprofile"},
		{name: "broker profile in process", args: []string{"-broker-cpuprofile", "p", "-broker", "inprocess"}, wantErr: "-broker-cpuprofile"},
		{name: "bad client", args: []string{"-client", "java"}, wantErr: "-client"},
		{name: "pull runs both clients on a full backlog", args: []string{"-mode", "pull"}, check: func(t *testing.T, c config) {
			if c.client != "ours,official" || c.backlog != 1000000 || c.pullBatch != 32 || !strings.HasPrefix(c.topic, "rmqbench_") || c.duration != 10*time.Minute {
				t.Fatalf("pull defaults %+v", c)
			}
		}},
		{name: "pull with clients in a given order", args: []string{"-mode", "pull", "-client", "official,ours", "-backlog", "500", "-pull-batch", "64"}, check: func(t *testing.T, c config) {
			if c.client != "official,ours" || c.backlog != 500 || c.pullBatch != 64 {
				t.Fatalf("pull %+v", c)
			}
		}},
		{name: "pull of one client", args: []string{"-mode", "pull", "-client", "ours"}, check: func(t *testing.T, c config) {
			if c.client != "ours" {
				t.Fatalf("pull client %q", c.client)
			}
		}},
		{name: "pull floor", args: []string{"-mode", "pull", "-client", "floor"}, wantErr: "pull mode wants"},
		{name: "pull bad list", args: []string{"-mode", "pull", "-client", "ours,"}, wantErr: "pull mode wants"},
		{name: "pull batch", args: []string{"-mode", "pull", "-pull-batch", "0"}, wantErr: "-pull-batch"},
		{name: "pull orderly", args: []string{"-mode", "pull", "-orderly"}, wantErr: "-orderly"},
		{name: "list outside pull", args: []string{"-client", "ours,official"}, wantErr: "-client"},
		{name: "floor only consumes", args: []string{"-client", "floor", "-mode", "sync"}, wantErr: "-client floor"},
		{name: "bad mode", args: []string{"-mode", "push"}, wantErr: "-mode"},
		{name: "zero callers", args: []string{"-callers", "0"}, wantErr: "-callers"},
		{name: "zero batch", args: []string{"-batch", "0"}, wantErr: "-batch"},
		{name: "zero size", args: []string{"-size", "0"}, wantErr: "-size"},
		{name: "zero duration", args: []string{"-duration", "0s"}, wantErr: "-duration"},
		{name: "flush with namesrv", args: []string{"-flush", "-namesrv", "h:1"}, wantErr: "-flush"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestSplitAddrs(t *testing.T) {
	got := splitAddrs("a:1;b:2,,c:3;")
	if strings.Join(got, "|") != "a:1|b:2|c:3" {
		t.Fatalf("got %q", got)
	}
}

func mustConfig(t *testing.T, args []string) config {
	t.Helper()
	c, err := parseConfig(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
