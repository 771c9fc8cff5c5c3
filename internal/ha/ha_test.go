package ha_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/ha"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

const segSize = 16 << 10

func openStore(t *testing.T, replica bool) *store.Store {
	t.Helper()
	s, err := store.Open(store.Config{
		Dir:                        t.TempDir(),
		CommitLogSegmentSize:       segSize,
		ConsumeQueueEntriesPerFile: 64,
		IndexSlots:                 64,
		IndexEntries:               256,
		FlushInterval:              10 * time.Millisecond,
		CheckpointInterval:         20 * time.Millisecond,
		Replica:                    replica,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func put(t *testing.T, s *store.Store, n int, queues int32) {
	t.Helper()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("k%d", i)
		_, err := s.PutMessage(context.Background(), &store.PutRequest{
			RecordFields: message.RecordFields{
				QueueID: int32(i) % queues, BornTimestamp: time.Now().UnixMilli(), BornHost: host, StoreHost: host,
				Body: bytes.Repeat([]byte{byte(i)}, 100+i%50), Topic: "T",
				Properties: "KEYS\x01" + key,
			},
			Keys: key,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func startMaster(t *testing.T, src ha.Source, cfg ha.MasterConfig) *ha.Master {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := ha.NewMaster(src, ln, cfg)
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func startSlave(t *testing.T, dst ha.Replica, addr string) *ha.Slave {
	t.Helper()
	s := ha.NewSlave(dst, ha.SlaveConfig{MasterAddr: func() string { return addr }, RetryInterval: 50 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond})
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// commitLog reads every byte of the commit log between from and to.
func commitLog(t *testing.T, s *store.Store, from, to int64) []byte {
	t.Helper()
	var out []byte
	for off := from; off < to; {
		b, err := s.ReadCommitLog(nil, off, 1<<20)
		if err != nil {
			t.Fatalf("ReadCommitLog(%d): %v", off, err)
		}
		if len(b) == 0 {
			t.Fatalf("ReadCommitLog(%d): nothing below %d", off, to)
		}
		out = append(out, b...)
		off += int64(len(b))
	}
	return out
}

func TestReplicationByteForByte(t *testing.T) {
	m, s := openStore(t, false), openStore(t, true)
	put(t, m, 300, 4) // several segments
	master := startMaster(t, m, ha.MasterConfig{BatchSize: 1000, HeartbeatInterval: 100 * time.Millisecond})
	// A slave holding a few bytes already starts where it is; an empty one
	// at the master's last file. Seed it with the master's first segment
	// so that it copies everything.
	first := commitLog(t, m, 0, segSize)
	if err := s.AppendReplica(0, first); err != nil {
		t.Fatal(err)
	}
	startSlave(t, s, master.Addr())
	put(t, m, 200, 4) // while connected
	waitFor(t, "slave to catch up", func() bool { return s.CommitLogMaxOffset() == m.CommitLogMaxOffset() })
	end := m.CommitLogMaxOffset()
	if a, b := commitLog(t, m, 0, end), commitLog(t, s, 0, end); !bytes.Equal(a, b) {
		t.Fatalf("commit logs differ (%d and %d bytes)", len(a), len(b))
	}
	waitFor(t, "acknowledgement", func() bool { off, _ := master.Acked(); return off == end })
	waitFor(t, "dispatch", func() bool { return s.MaxOffset("T", 3) == 125 })
	for q := int32(0); q < 4; q++ {
		if a, b := m.MaxOffset("T", q), s.MaxOffset("T", q); a != b || a != 125 {
			t.Errorf("queue %d: master max %d, slave max %d, want 125", q, a, b)
		}
		res, err := s.GetMessages(nil, &store.GetRequest{Topic: "T", QueueID: q, Offset: 0, MaxMessages: 32})
		if err != nil || res.Status != store.GetFound || res.Messages != 32 {
			t.Fatalf("slave GetMessages queue %d: %v %v %d", q, err, res.Status, res.Messages)
		}
		want, _ := m.GetMessages(nil, &store.GetRequest{Topic: "T", QueueID: q, Offset: 0, MaxMessages: 32})
		if !bytes.Equal(res.Data, want.Data) {
			t.Fatalf("queue %d: pulled records differ", q)
		}
	}
	if r, err := m.QueryByKey("T", "k299", 4, 0, time.Now().UnixMilli()+1000); err != nil || r.Messages != 1 {
		t.Fatalf("master QueryByKey: %v %+v", err, r)
	}
	if r, err := s.QueryByKey("T", "k299", 4, 0, time.Now().UnixMilli()+1000); err != nil || r.Messages != 1 {
		t.Fatalf("slave QueryByKey: %v %+v", err, r)
	}
	if got := len(master.Slaves()); got != 1 {
		t.Errorf("Slaves: %d, want 1", got)
	}
}

func TestEmptySlaveStartsAtLastFile(t *testing.T) {
	m, s := openStore(t, false), openStore(t, true)
	put(t, m, 300, 1)
	master := startMaster(t, m, ha.MasterConfig{})
	startSlave(t, s, master.Addr())
	end := m.CommitLogMaxOffset()
	start := end - end%segSize
	waitFor(t, "slave to catch up", func() bool { return s.CommitLogMaxOffset() == end })
	if got := s.CommitLogMinOffset(); got != start {
		t.Fatalf("slave min offset %d, want %d", got, start)
	}
	if a, b := commitLog(t, m, start, end), commitLog(t, s, start, end); !bytes.Equal(a, b) {
		t.Fatal("commit logs differ")
	}
	// Queue offsets are the master's: the slave's queue starts mid-way.
	waitFor(t, "dispatch", func() bool { return s.MaxOffset("T", 0) == 300 })
	if a, b := m.MaxOffset("T", 0), s.MaxOffset("T", 0); a != b {
		t.Fatalf("queue max: master %d, slave %d", a, b)
	}
	if min := s.MinOffset("T", 0); min == 0 {
		t.Fatal("slave queue starts at 0 though it has only the last file")
	}
}

func TestSlaveRefusesPuts(t *testing.T) {
	s := openStore(t, true)
	_, err := s.PutMessage(context.Background(), &store.PutRequest{RecordFields: message.RecordFields{Topic: "T", Body: []byte("x")}})
	if err == nil || !strings.Contains(err.Error(), "replica") {
		t.Fatalf("put on a replica: %v", err)
	}
}

// TestSlaveWire plays the master's side by hand: the slave's first report,
// a chunk cut inside a record, a heartbeat, and a chunk at a wrong offset,
// which makes the slave reconnect and report again.
func TestSlaveWire(t *testing.T) {
	m, s := openStore(t, false), openStore(t, true)
	put(t, m, 10, 1)
	data := commitLog(t, m, 0, m.CommitLogMaxOffset())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	startSlave(t, s, ln.Addr().String())
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	readReport := func(c net.Conn) int64 {
		t.Helper()
		var b [8]byte
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, b[:]); err != nil {
			t.Fatal(err)
		}
		return int64(binary.BigEndian.Uint64(b[:]))
	}
	frame := func(off int64, body []byte) []byte {
		f := binary.BigEndian.AppendUint64(nil, uint64(off))
		f = binary.BigEndian.AppendUint32(f, uint32(len(body)))
		return append(f, body...)
	}
	if got := readReport(conn); got != 0 {
		t.Fatalf("first report %d, want 0", got)
	}
	cut := 150 // inside the second record
	conn.Write(frame(0, data[:cut]))
	conn.Write(frame(int64(cut), nil))
	conn.Write(frame(int64(cut), data[cut:]))
	for readReport(conn) != int64(len(data)) {
	}
	waitFor(t, "dispatch", func() bool { return s.MaxOffset("T", 0) == 10 })
	conn.Write(frame(7, []byte("garbage")))
	conn2, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if got := readReport(conn2); got != int64(len(data)) {
		t.Fatalf("report after reconnect %d, want %d", got, len(data))
	}
}

// TestMasterWire plays a slave by hand against the master: no data before
// the first report, frames from the reported offset, and heartbeats.
func TestMasterWire(t *testing.T) {
	m := openStore(t, false)
	put(t, m, 20, 1)
	master := startMaster(t, m, ha.MasterConfig{HeartbeatInterval: 50 * time.Millisecond, BatchSize: 500})
	c, err := net.Dial("tcp", master.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	end := m.CommitLogMaxOffset()
	from := int64(1000)
	rec, err := m.ReadCommitLog(nil, 0, segSize)
	if err != nil {
		t.Fatal(err)
	}
	// Start at a record boundary past 1000.
	for p := int64(0); ; {
		size := int64(binary.BigEndian.Uint32(rec[p:]))
		if p >= from {
			from = p
			break
		}
		p += size
	}
	c.Write(binary.BigEndian.AppendUint64(nil, uint64(from)))
	var got []byte
	next := from
	heartbeats := 0
	for heartbeats < 2 {
		var h [12]byte
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, h[:]); err != nil {
			t.Fatal(err)
		}
		off, n := int64(binary.BigEndian.Uint64(h[:])), int(binary.BigEndian.Uint32(h[8:]))
		if off != next {
			t.Fatalf("frame at %d, want %d", off, next)
		}
		if n > 500 {
			t.Fatalf("frame of %d bytes above the batch size", n)
		}
		if n == 0 {
			heartbeats++
			continue
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
		next += int64(n)
	}
	if want := rec[from:end]; !bytes.Equal(got, want) {
		t.Fatalf("streamed %d bytes, want %d equal ones", len(got), len(want))
	}
	// A report past the master's end closes the connection.
	c.Write(binary.BigEndian.AppendUint64(nil, uint64(end+1)))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := c.Read(make([]byte, 64)); err != nil {
			break
		}
	}
}

func TestSlaveRestartResumes(t *testing.T) {
	m := openStore(t, false)
	dir := t.TempDir()
	cfg := store.Config{Dir: dir, CommitLogSegmentSize: segSize, ConsumeQueueEntriesPerFile: 64, IndexSlots: 64, IndexEntries: 256, Replica: true}
	s, err := store.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	put(t, m, 50, 2)
	master := startMaster(t, m, ha.MasterConfig{BatchSize: 777})
	sl := ha.NewSlave(s, ha.SlaveConfig{MasterAddr: master.Addr, RetryInterval: 50 * time.Millisecond})
	waitFor(t, "catch up", func() bool { return s.CommitLogMaxOffset() == m.CommitLogMaxOffset() })
	sl.Close(context.Background())
	s.Crash()
	put(t, m, 50, 2)
	s, err = store.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sl = ha.NewSlave(s, ha.SlaveConfig{MasterAddr: master.Addr, RetryInterval: 50 * time.Millisecond})
	defer sl.Close(context.Background())
	waitFor(t, "catch up after restart", func() bool { return s.MaxOffset("T", 1) == 50 })
	if got := s.MaxOffset("T", 1); got != 50 {
		t.Fatalf("queue max %d, want 50", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "commitlog", fmt.Sprintf("%020d", 0))); err != nil {
		t.Fatal(err)
	}
}
