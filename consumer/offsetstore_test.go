package consumer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func TestLocalStorePath(t *testing.T) {
	got := localStorePath("/d", "10.0.0.1", "", "", "g")
	if want := filepath.Join("/d", "10.0.0.1@DEFAULT", "g", "offsets.json"); got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
	got = localStorePath("/d", "10.0.0.1", "inst", "unit", "ns%g")
	if want := filepath.Join("/d", "10.0.0.1@inst@unit", "ns%g", "offsets.json"); got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
}

func TestLocalStore(t *testing.T) {
	dir := t.TempDir()
	path := localStorePath(dir, "127.0.0.1", "", "", "g")
	a := rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}
	b := rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}
	other := rocketmq.MessageQueue{Topic: "U", BrokerName: "b", QueueID: 0}
	ctx := context.Background()

	s := newLocalStore(path)
	if err := s.load(); err != nil {
		t.Fatalf("load without a file: %v", err)
	}
	if _, err := s.readStore(ctx, a); !errors.Is(err, errNoOffset) {
		t.Fatalf("readStore without a file: %v", err)
	}
	s.update(a, 10, true)
	s.update(a, 5, true) // increase only
	s.update(b, 7, false)
	s.update(other, 3, false)
	if err := s.persistAll(ctx, nil, true); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Java's OffsetSerializeWrapper, fastjson syntax: MessageQueue keys as objects.
	for _, want := range []string{`"offsetTable":{`, `{"brokerName":"b","queueId":0,"topic":"T"}:10`, `{"brokerName":"b","queueId":1,"topic":"T"}:7`} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("file %s lacks %s", data, want)
		}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left: %v", err)
	}

	// A second write keeps the first as .bak.
	s.update(a, 20, true)
	if err := s.persist(ctx, a); err != nil {
		t.Fatal(err)
	}
	bak, err := os.ReadFile(path + ".bak")
	if err != nil || string(bak) != string(data) {
		t.Fatalf(".bak = %q, %v; want the previous file", bak, err)
	}

	// A second member on the same file is refused while the first holds it.
	if err := newLocalStore(path).load(); err == nil || !strings.Contains(err.Error(), "WithInstanceName") {
		t.Fatalf("second load of a held file: %v", err)
	}
	s.close()

	// A restarted member reads what was written.
	s2 := newLocalStore(path)
	if err := s2.load(); err != nil {
		t.Fatal(err)
	}
	defer s2.close()
	if got := s2.readMemory(a); got != 20 {
		t.Fatalf("reloaded offset %d, want 20", got)
	}
	if got, err := s2.readStore(ctx, b); err != nil || got != 7 {
		t.Fatalf("readStore %d, %v; want 7", got, err)
	}
	if snap := s2.snapshot("T"); len(snap) != 2 || snap[a] != 20 {
		t.Fatalf("snapshot %v", snap)
	}

	// A damaged file falls back to the .bak.
	if err := os.WriteFile(path, []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	s2.close()
	s3 := newLocalStore(path)
	if err := s3.load(); err != nil {
		t.Fatal(err)
	}
	defer s3.close()
	if got := s3.readMemory(a); got != 10 {
		t.Fatalf("offset from .bak %d, want 10", got)
	}
}

func TestRemoteStore(t *testing.T) {
	f := newFakeCluster(t)
	topic := "T"
	f.createTopic(topic, 2)
	cfg := mqclient.DefaultConfig()
	cfg.NameServers = []string{f.addr()}
	cli, err := mqclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cli.UpdateRoute(ctx, topic); err != nil {
		t.Fatal(err)
	}
	qs, err := cli.SubscribeQueues(ctx, topic)
	if err != nil || len(qs) != 2 {
		t.Fatalf("queues %v, %v", qs, err)
	}
	group := "g1"
	s := newRemoteStore(cli, group, cli.Logger())
	if _, err := s.readStore(ctx, qs[0]); !errors.Is(err, errNoOffset) {
		t.Fatalf("readStore of a new group: %v, want errNoOffset", err)
	}
	want := map[rocketmq.MessageQueue]int64{qs[0]: 3, qs[1]: 5}
	for mq, off := range want {
		s.update(mq, off, false)
	}
	if err := s.persistAll(ctx, qs, true); err != nil {
		t.Fatal(err)
	}
	s2 := newRemoteStore(cli, group, cli.Logger())
	for mq, off := range want {
		got, err := s2.readStore(ctx, mq)
		if err != nil || got != off {
			t.Fatalf("readStore %v: %d, %v; want %d", mq, got, err, off)
		}
		if m := s2.readMemory(mq); m != off {
			t.Fatalf("memory after readStore: %d, want %d", m, off)
		}
	}
	// The periodic persist is oneway: poll until the broker has it.
	s.update(qs[0], 4, true)
	if err := s.persistAll(ctx, qs[:1], false); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "oneway offset stored", func() bool {
		got, err := s2.readStore(ctx, qs[0])
		return err == nil && got == 4
	})
}
