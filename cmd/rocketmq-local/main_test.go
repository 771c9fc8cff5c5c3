package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// startServe runs serve in the background and returns the printed
// listener addresses by name ("namesrv", "broker-a", ...).
func startServe(t *testing.T, o options) (map[string]string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, o, pw, io.Discard)
		pw.CloseWithError(err)
		done <- err
	}()
	addrs := make(map[string]string)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(20 * time.Second)
	want := 1 + o.brokers
	if o.metrics != "" {
		want++
	}
	if o.console != "off" && o.console != "" {
		want++
	}
	for len(addrs) < want {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended early: %v", <-done)
			}
			f := strings.Fields(line)
			if len(f) >= 4 && f[1] == "listening" {
				addrs[f[0]] = f[3]
			}
		case <-timeout:
			t.Fatalf("listeners not announced; got %v", addrs)
		}
	}
	stop := func() {
		cancel()
		go func() {
			for range lines {
			}
		}()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	return addrs, stop
}

func TestServeRestartKeepsTopics(t *testing.T) {
	o := options{namesrv: "127.0.0.1:0", broker: "127.0.0.1:0", data: t.TempDir(), brokers: 2,
		cluster: "DefaultCluster", flush: "sync", longPollCheck: time.Second, segmentSize: 1 << 20}
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()

	addrs, stop := startServe(t, o)
	if addrs["namesrv"] == "" || addrs["broker-a"] == "" || addrs["broker-b"] == "" {
		t.Fatalf("announced listeners: %v", addrs)
	}
	if err := rmqtest.CreateTopic(ctx, addrs["namesrv"], "LocalTopic", 4, rmqtest.TopicOnBrokers("broker-b")); err != nil {
		t.Fatal(err)
	}
	stop()

	addrs, stop = startServe(t, o)
	defer stop()
	resp, err := cli.Invoke(ctx, addrs["broker-b"], remoting.NewRequest(remoting.GetAllTopicConfig, nil, nil))
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("get topics: %v %+v", err, resp)
	}
	var w remoting.TopicConfigSerializeWrapper
	if err := w.DecodeJSON(resp.Body); err != nil {
		t.Fatal(err)
	}
	if tc, ok := w.TopicConfigTable["LocalTopic"]; !ok || tc.WriteQueueNums != 4 {
		t.Fatalf("LocalTopic after restart: %+v (present %v)", tc, ok)
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		ok   bool
	}{
		{"defaults", nil, true},
		{"sync", []string{"-flush", "sync", "-brokers", "3"}, true},
		{"bad flush", []string{"-flush", "never"}, false},
		{"zero brokers", []string{"-brokers", "0"}, false},
		{"unknown flag", []string{"-nope"}, false},
		{"delay levels and timer precision", []string{"-delay-levels", "100ms 1s 1h", "-timer-precision", "100ms"}, true},
		{"timer precision too fine", []string{"-timer-precision", "10us"}, false},
		{"connection limits", []string{"-max-conns", "-1", "-max-conn-pending", "64", "-max-conn-outbound", "1048576", "-max-conn-stall", "5s"}, true},
		{"negative connection stall", []string{"-max-conn-stall", "-1s"}, false},
		{"offset flush interval", []string{"-offset-flush-interval", "500ms"}, true},
		{"offset flush interval zero", []string{"-offset-flush-interval", "0s"}, false},
		{"tls", []string{"-tls-cert", "c.pem", "-tls-key", "k.pem", "-tls-mode", "enforcing"}, true},
		{"tls cert without key", []string{"-tls-cert", "c.pem"}, false},
		{"tls mode without cert", []string{"-tls-mode", "permissive"}, false},
		{"bad tls mode", []string{"-tls-cert", "c.pem", "-tls-key", "k.pem", "-tls-mode", "on"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, io.Discard)
			if (err == nil) != tc.ok {
				t.Fatalf("parseFlags(%v) = %+v, %v", tc.args, o, err)
			}
			if tc.ok && len(tc.args) == 0 && (o.namesrv != "127.0.0.1:9876" || o.broker != "127.0.0.1:10911" || o.data != "./rocketmq-data") {
				t.Fatalf("defaults: %+v", o)
			}
		})
	}
}

// -h prints the usage, which names every flag, and is not an error; the
// README's flag list names every flag too.
func TestHelp(t *testing.T) {
	var stdout, stderr strings.Builder
	if err := run([]string{"-h"}, &stdout, &stderr); err != nil {
		t.Fatalf("run -h: %v", err)
	}
	usage := stdout.String()
	if !strings.HasPrefix(usage, "Usage: rocketmq-local") || strings.Contains(usage+stderr.String(), "help requested") || stderr.Len() != 0 {
		t.Errorf("-h printed:\n%s%s", usage, stderr.String())
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "`cmd/rocketmq-local` flags")
	section, _, _ = strings.Cut(section, "\n\n")
	newFlagSet(new(options), io.Discard).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(usage, "  -"+f.Name+" ") && !strings.Contains(usage, "  -"+f.Name+"\t") &&
			!strings.Contains(usage, "  -"+f.Name+"\n") {
			t.Errorf("usage does not list -%s", f.Name)
		}
		if !strings.Contains(section, "`-"+f.Name) {
			t.Errorf("README's rocketmq-local flags do not list -%s", f.Name)
		}
	})
}

// -enable-property-filter is on by default and reaches the brokers: a
// SQL92 subscription is accepted, or refused as by a default Java broker.
func TestPropertyFilterFlag(t *testing.T) {
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, tc := range []struct {
		args []string
		code int32
	}{
		{nil, remoting.Success},
		{[]string{"-enable-property-filter=false"}, remoting.SystemError},
	} {
		t.Run(strings.Join(append([]string{"flags"}, tc.args...), " "), func(t *testing.T) {
			o, err := parseFlags(append([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0",
				"-data", t.TempDir(), "-segment-size", "1048576"}, tc.args...), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			addrs, stop := startServe(t, o)
			defer stop()
			check := remoting.CheckClientRequestBody{ClientID: "ip@1", Group: "g",
				SubscriptionData: remoting.SubscriptionData{Topic: "T", SubString: "a > 1", ExpressionType: remoting.ExpressionTypeSQL92}}
			resp, err := cli.Invoke(context.Background(), addrs["broker-a"],
				remoting.NewRequest(remoting.CheckClientConfig, nil, check.AppendJSON(nil, remoting.JSONFastjson)))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Code != tc.code {
				t.Fatalf("CHECK_CLIENT_CONFIG: code %d %q, want %d", resp.Code, resp.Remark, tc.code)
			}
		})
	}
}
