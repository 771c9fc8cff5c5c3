package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// testConfig is a small store: 8 KiB segments, 16-entry queue files,
// tiny index files, fast background flushing.
func testConfig(t testing.TB) Config {
	return Config{
		Dir:                        t.TempDir(),
		CommitLogSegmentSize:       8 << 10,
		ConsumeQueueEntriesPerFile: 16,
		IndexSlots:                 32,
		IndexEntries:               64,
		FlushInterval:              10 * time.Millisecond,
		CheckpointInterval:         20 * time.Millisecond,
	}
}

func openStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%s): %v", cfg.Dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// msg describes a test message; req builds its PutRequest.
type msg struct {
	topic string
	queue int32
	body  string
	tags  string
	uniq  string
	keys  string
	sys   int32
}

func (m msg) props() string {
	var b strings.Builder
	add := func(k, v string) {
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(2)
		}
		b.WriteString(k)
		b.WriteByte(1)
		b.WriteString(v)
	}
	add(propTags, m.tags)
	add(propKeys, m.keys)
	add(propUniqKey, m.uniq)
	add("WAIT", "true")
	return b.String()
}

func (m msg) req() *PutRequest {
	return &PutRequest{
		RecordFields: message.RecordFields{
			QueueID:       m.queue,
			SysFlag:       m.sys,
			BornTimestamp: 1700000000000,
			BornHost:      netip.MustParseAddrPort("192.168.0.10:54321"),
			StoreHost:     netip.MustParseAddrPort("192.168.0.2:10911"),
			Body:          []byte(m.body),
			Topic:         m.topic,
			Properties:    m.props(),
		},
		TagsCode:  message.TagHash(m.tags),
		UniqKey:   m.uniq,
		Keys:      m.keys,
		WaitFlush: true,
	}
}

// stored is what a put returned, to check reads against.
type stored struct {
	m   msg
	res PutResult
}

// expectRecord re-encodes the message with the offsets the store assigned.
func (st stored) expectRecord(t testing.TB) []byte {
	t.Helper()
	r := st.m.req()
	r.QueueOffset = st.res.QueueOffset
	r.PhysicalOffset = st.res.PhysicalOffset
	r.StoreTimestamp = st.res.StoreTimestamp
	b, _, err := r.AppendRecord(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t testing.TB, s *Store, m msg) stored {
	t.Helper()
	res, err := s.PutMessage(context.Background(), m.req())
	if err != nil {
		t.Fatalf("PutMessage(%+v): %v", m, err)
	}
	if res.Status != PutOK {
		t.Fatalf("PutMessage(%+v): status %v", m, res.Status)
	}
	return stored{m, res}
}

func body(i, n int) string {
	s := fmt.Sprintf("message-%06d-", i)
	if len(s) < n {
		s += strings.Repeat("x", n-len(s))
	}
	return s[:max(n, 1)]
}

// splitRecords cuts a pull body into records.
func splitRecords(t testing.TB, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		h, err := parseRecord(b, true)
		if err != nil {
			t.Fatalf("bad record in body: %v\n%s", err, hex.Dump(b[:min(len(b), 128)]))
		}
		out = append(out, b[:h.Size])
		b = b[h.Size:]
	}
	return out
}

func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s mismatch\ngot:\n%swant:\n%s", what, hex.Dump(got), hex.Dump(want))
	}
}

// readAll pulls a whole queue from offset 0.
func readAll(t testing.TB, s *Store, topic string, q int32) [][]byte {
	t.Helper()
	var out [][]byte
	off := s.MinOffset(topic, q)
	for {
		res, err := s.GetMessages(nil, &GetRequest{Topic: topic, QueueID: q, Offset: off})
		if err != nil {
			t.Fatalf("GetMessages(%s/%d@%d): %v", topic, q, off, err)
		}
		switch res.Status {
		case GetFound:
			out = append(out, splitRecords(t, res.Data)...)
		case GetOffsetOverflowOne, GetNoMessageInQueue:
			return out
		default:
			t.Fatalf("GetMessages(%s/%d@%d): status %v", topic, q, off, res.Status)
		}
		off = res.NextBeginOffset
	}
}

// checkAll verifies that every stored message reads back byte for byte at
// its queue offset and commit-log offset.
func checkAll(t testing.TB, s *Store, all []stored) {
	t.Helper()
	byQueue := map[queueKey][]stored{}
	for _, st := range all {
		k := queueKey{st.m.topic, st.m.queue}
		byQueue[k] = append(byQueue[k], st)
	}
	for k, sts := range byQueue {
		recs := readAll(t, s, k.topic, k.id)
		if len(recs) != len(sts) {
			t.Fatalf("%s/%d: read %d messages, stored %d", k.topic, k.id, len(recs), len(sts))
		}
		for i, st := range sts {
			want := st.expectRecord(t)
			sameBytes(t, fmt.Sprintf("%s/%d message %d", k.topic, k.id, i), recs[i], want)
			got, err := s.MessageAt(st.res.PhysicalOffset)
			if err != nil {
				t.Fatalf("MessageAt(%d): %v", st.res.PhysicalOffset, err)
			}
			sameBytes(t, "MessageAt", got, want)
			prefix := []byte("prefix")
			got, err = s.AppendMessageAt(prefix, st.res.PhysicalOffset)
			if err != nil {
				t.Fatalf("AppendMessageAt(%d): %v", st.res.PhysicalOffset, err)
			}
			sameBytes(t, "AppendMessageAt", got, append(prefix, want...))
		}
	}
}

// stopStore crashes s (as if the process died) or closes it cleanly.
func stopStore(s *Store, crash bool) {
	if crash {
		s.Crash()
		return
	}
	s.Close()
}
