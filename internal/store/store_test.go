package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func TestPutGetRoundTrip(t *testing.T) {
	s := openStore(t, testConfig(t))
	var all []stored
	for i := range 20 {
		all = append(all, put(t, s, msg{topic: "TopicA", queue: int32(i % 2), body: body(i, 50+i), tags: "TagA", uniq: fmt.Sprintf("U%d", i)}))
	}
	for i, st := range all {
		if want := int64(i / 2); st.res.QueueOffset != want {
			t.Errorf("message %d: queue offset %d, want %d", i, st.res.QueueOffset, want)
		}
		if i > 0 && st.res.PhysicalOffset != all[i-1].res.PhysicalOffset+int64(all[i-1].res.WroteBytes) {
			t.Errorf("message %d: physical offset %d does not follow the previous record", i, st.res.PhysicalOffset)
		}
	}
	checkAll(t, s, all)
	// The root package's decoder reads what the store wrote.
	res, err := s.GetMessages(nil, &GetRequest{Topic: "TopicA", QueueID: 1, Offset: 0})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := message.DecodeRecords(res.Data)
	if err != nil || len(msgs) != 10 {
		t.Fatalf("DecodeRecords: %d messages, %v", len(msgs), err)
	}
	for i, m := range msgs {
		st := all[2*i+1]
		if m.Topic != "TopicA" || m.QueueID != 1 || m.QueueOffset != int64(i) || m.CommitLogOffset != st.res.PhysicalOffset ||
			m.StoreTimestamp != st.res.StoreTimestamp || string(m.Body) != st.m.body || m.Properties["UNIQ_KEY"] != st.m.uniq {
			t.Fatalf("decoded message %d: %+v", i, m)
		}
	}
	if got := s.MaxOffset("TopicA", 0); got != 10 {
		t.Errorf("MaxOffset = %d, want 10", got)
	}
	if got := s.MinOffset("TopicA", 1); got != 0 {
		t.Errorf("MinOffset = %d, want 0", got)
	}
	if got, want := s.CommitLogMaxOffset(), all[19].res.PhysicalOffset+int64(all[19].res.WroteBytes); got != want {
		t.Errorf("CommitLogMaxOffset = %d, want %d", got, want)
	}
}

// The commit log rolls over to new segments; each unused tail carries the
// blank marker with the remaining size.
func TestRollOverWithBlankRecords(t *testing.T) {
	cfg := testConfig(t)
	cfg.CommitLogSegmentSize = 4096
	s := openStore(t, cfg)
	var all []stored
	for i := range 200 {
		all = append(all, put(t, s, msg{topic: "Roll", queue: int32(i % 3), body: body(i, 100+i*7%400)}))
	}
	checkAll(t, s, all)
	segs := *s.segs.Load()
	if len(segs) < 10 {
		t.Fatalf("only %d segments for %d bytes", len(segs), s.CommitLogMaxOffset())
	}
	for i, seg := range segs {
		if seg.start != int64(i)*4096 || filepath.Base(seg.path) != fmt.Sprintf("%020d", seg.start) {
			t.Fatalf("segment %d: start %d, file %s", i, seg.start, seg.path)
		}
	}
	// Walk each full segment: records, then a blank marker up to the end.
	for _, seg := range segs[:len(segs)-1] {
		raw, err := os.ReadFile(seg.path)
		if err != nil {
			t.Fatal(err)
		}
		pos := 0
		for {
			size := int(binary.BigEndian.Uint32(raw[pos:]))
			magic := binary.BigEndian.Uint32(raw[pos+4:])
			if magic == uint32(blankMagic) {
				if pos+size != len(raw) {
					t.Fatalf("%s: blank at %d has size %d, want %d", seg.path, pos, size, len(raw)-pos)
				}
				break
			}
			if magic != uint32(0xDAA320A7) || size < message.RecordMinSize {
				t.Fatalf("%s: bad record at %d: size %d magic %#x", seg.path, pos, size, magic)
			}
			pos += size
		}
	}
	for _, st := range all {
		if st.res.PhysicalOffset/4096 != (st.res.PhysicalOffset+int64(st.res.WroteBytes)-1)/4096 {
			t.Fatalf("record at %d (%d bytes) spans two segments", st.res.PhysicalOffset, st.res.WroteBytes)
		}
	}
}

func TestConsumeQueueFiles(t *testing.T) {
	cfg := testConfig(t)
	cfg.ConsumeQueueEntriesPerFile = 5
	s := openStore(t, cfg)
	var all []stored
	for i := range 12 {
		all = append(all, put(t, s, msg{topic: "CQ", queue: 3, body: body(i, 30), tags: fmt.Sprintf("Tag%d", i%2)}))
	}
	dir := filepath.Join(cfg.Dir, "consumequeue", "CQ", "3")
	for i, name := range []string{"00000000000000000000", "00000000000000000100", "00000000000000000200"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != 100 {
			t.Fatalf("%s: %d bytes, want 100", name, len(raw))
		}
		for j := range 5 {
			n := i*5 + j
			e := raw[j*20 : j*20+20]
			if n >= len(all) {
				sameBytes(t, "unused entry", e, make([]byte, 20))
				continue
			}
			want := binary.BigEndian.AppendUint64(nil, uint64(all[n].res.PhysicalOffset))
			want = binary.BigEndian.AppendUint32(want, uint32(all[n].res.WroteBytes))
			want = binary.BigEndian.AppendUint64(want, uint64(message.TagHash(all[n].m.tags)))
			sameBytes(t, fmt.Sprintf("entry %d", n), e, want)
		}
	}
	e, err := s.ConsumeQueueEntry("CQ", 3, 7)
	if err != nil || e.PhysicalOffset != all[7].res.PhysicalOffset || e.TagsCode != message.TagHash("Tag1") {
		t.Fatalf("ConsumeQueueEntry = %+v, %v", e, err)
	}
	if _, err := s.ConsumeQueueEntry("CQ", 3, 12); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ConsumeQueueEntry past the end: %v", err)
	}
}

func TestGetMessagesStatuses(t *testing.T) {
	cfg := testConfig(t)
	cfg.ConsumeQueueEntriesPerFile = 5
	s := openStore(t, cfg)
	var all []stored
	for i := range 12 {
		tag := "TagA"
		if i >= 4 && i < 8 {
			tag = "TagB"
		}
		all = append(all, put(t, s, msg{topic: "St", queue: 0, body: body(i, 100), tags: tag}))
	}
	size := all[0].res.WroteBytes
	onlyA := func(c int64) bool { return c == message.TagHash("TagA") }
	onlyC := func(c int64) bool { return c == message.TagHash("TagC") }
	cases := []struct {
		name     string
		req      GetRequest
		status   GetStatus
		next     int64
		messages int
	}{
		{"unknown queue", GetRequest{Topic: "Nope", QueueID: 0}, GetNoMessageInQueue, 0, 0},
		{"negative queue", GetRequest{Topic: "St", QueueID: -1}, GetNoMatchedLogicQueue, 0, 0},
		{"found default caps", GetRequest{Topic: "St", Offset: 0}, GetFound, 12, 12},
		{"max messages", GetRequest{Topic: "St", Offset: 2, MaxMessages: 3}, GetFound, 5, 3},
		{"max bytes", GetRequest{Topic: "St", Offset: 0, MaxBytes: 2*size + 1}, GetFound, 2, 2},
		{"first message always", GetRequest{Topic: "St", Offset: 0, MaxBytes: 10}, GetFound, 1, 1},
		{"overflow one", GetRequest{Topic: "St", Offset: 12}, GetOffsetOverflowOne, 12, 0},
		{"overflow badly", GetRequest{Topic: "St", Offset: 40}, GetOffsetOverflowBadly, 12, 0},
		{"tag filter skips", GetRequest{Topic: "St", Offset: 2, Filter: onlyA}, GetFound, 12, 6},
		{"tag filter stops at cap", GetRequest{Topic: "St", Offset: 2, MaxMessages: 2, Filter: onlyA}, GetFound, 4, 2},
		{"tag filter skips then caps", GetRequest{Topic: "St", Offset: 4, MaxMessages: 2, Filter: onlyA}, GetFound, 10, 2},
		{"nothing matches", GetRequest{Topic: "St", Offset: 1, Filter: onlyC}, GetNoMatchedMessage, 12, 0},
		{"record filter", GetRequest{Topic: "St", Offset: 0, RecordFilter: func(r []byte) bool {
			return binary.BigEndian.Uint64(r[message.RecordPosQueueOffset:])%2 == 0
		}}, GetFound, 12, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := s.GetMessages(nil, &c.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.status || res.NextBeginOffset != c.next || res.Messages != c.messages {
				t.Fatalf("got %v next %d messages %d, want %v next %d messages %d",
					res.Status, res.NextBeginOffset, res.Messages, c.status, c.next, c.messages)
			}
			if res.Status != GetFound {
				if len(res.Data) != 0 {
					t.Fatalf("status %v with %d bytes", res.Status, len(res.Data))
				}
				return
			}
			recs := splitRecords(t, res.Data)
			if len(recs) != c.messages {
				t.Fatalf("%d records in body, want %d", len(recs), c.messages)
			}
			if res.MinOffset != 0 || res.MaxOffset != 12 {
				t.Fatalf("min/max %d/%d", res.MinOffset, res.MaxOffset)
			}
		})
	}
	t.Run("appends to dst", func(t *testing.T) {
		res, err := s.GetMessages([]byte("prefix"), &GetRequest{Topic: "St", Offset: 11})
		if err != nil || string(res.Data[:6]) != "prefix" {
			t.Fatalf("%v %q", err, res.Data[:6])
		}
		sameBytes(t, "record", res.Data[6:], all[11].expectRecord(t))
	})

	// The remaining statuses need a damaged queue; build one by hand.
	q := s.queues[queueKey{"St", 0}]
	s.mu.Lock()
	q.writeEntry(10, cqEntry{size: fillerSize}, s)
	q.writeEntry(11, cqEntry{phys: all[11].res.PhysicalOffset + 1, size: int32(size)}, s)
	s.mu.Unlock()
	t.Run("message was removing", func(t *testing.T) {
		res, _ := s.GetMessages(nil, &GetRequest{Topic: "St", Offset: 10})
		if res.Status != GetMessageWasRemoving || res.NextBeginOffset != 12 {
			t.Fatalf("got %v next %d", res.Status, res.NextBeginOffset)
		}
	})
	t.Run("too small", func(t *testing.T) {
		q.min.Store(3)
		defer q.min.Store(0)
		res, _ := s.GetMessages(nil, &GetRequest{Topic: "St", Offset: 1})
		if res.Status != GetOffsetTooSmall || res.NextBeginOffset != 3 {
			t.Fatalf("got %v next %d", res.Status, res.NextBeginOffset)
		}
	})
	t.Run("offset found null", func(t *testing.T) {
		files := *q.files.Load()
		short := files[:2]
		q.files.Store(&short)
		defer q.files.Store(&files)
		res, _ := s.GetMessages(nil, &GetRequest{Topic: "St", Offset: 11})
		if res.Status != GetOffsetFoundNull || res.NextBeginOffset != 15 {
			t.Fatalf("got %v next %d", res.Status, res.NextBeginOffset)
		}
	})
	t.Run("empty queue", func(t *testing.T) {
		s.mu.Lock()
		eq, _ := s.queueLocked("Empty", 0)
		s.mu.Unlock()
		_ = eq
		res, _ := s.GetMessages(nil, &GetRequest{Topic: "Empty", Offset: 5})
		if res.Status != GetNoMessageInQueue || res.NextBeginOffset != 0 {
			t.Fatalf("got %v next %d", res.Status, res.NextBeginOffset)
		}
	})
}

func TestGetStatusNames(t *testing.T) {
	want := map[GetStatus]string{
		GetFound: "FOUND", GetNoMatchedMessage: "NO_MATCHED_MESSAGE", GetMessageWasRemoving: "MESSAGE_WAS_REMOVING",
		GetOffsetFoundNull: "OFFSET_FOUND_NULL", GetOffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY",
		GetOffsetOverflowOne: "OFFSET_OVERFLOW_ONE", GetOffsetTooSmall: "OFFSET_TOO_SMALL",
		GetNoMatchedLogicQueue: "NO_MATCHED_LOGIC_QUEUE", GetNoMessageInQueue: "NO_MESSAGE_IN_QUEUE",
	}
	for st, name := range want {
		if st.String() != name {
			t.Errorf("%d: %q, want %q", int(st), st.String(), name)
		}
	}
	if PutFlushDiskTimeout.String() != "FLUSH_DISK_TIMEOUT" || PutOK.String() != "PUT_OK" {
		t.Error("PutStatus names")
	}
}

func TestBatchPut(t *testing.T) {
	cfg := testConfig(t)
	cfg.CommitLogSegmentSize = 4096
	s := openStore(t, cfg)
	first := put(t, s, msg{topic: "B", queue: 1, body: body(0, 2000)})
	var reqs []PutRequest
	var ms []msg
	for i := range 10 {
		m := msg{topic: "B", queue: 1, body: body(i+1, 150), uniq: fmt.Sprintf("batch-%d", i)}
		ms = append(ms, m)
		reqs = append(reqs, *m.req())
	}
	res, err := s.PutMessages(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if res.MsgCount != 10 || res.QueueOffset != 1 || len(res.PhysicalOffsets) != 10 {
		t.Fatalf("batch result %+v", res)
	}
	// The batch did not fit behind the first record: it starts the next segment whole.
	if res.PhysicalOffset != 4096 {
		t.Fatalf("batch at %d, want 4096", res.PhysicalOffset)
	}
	all := []stored{first}
	phys := res.PhysicalOffset
	for i, m := range ms {
		r := res
		r.QueueOffset, r.PhysicalOffset = res.QueueOffset+int64(i), phys
		rec := stored{m, r}
		r.WroteBytes = len(rec.expectRecord(t))
		if res.PhysicalOffsets[i] != phys {
			t.Fatalf("record %d at %d, want %d", i, res.PhysicalOffsets[i], phys)
		}
		all = append(all, stored{m, r})
		phys += int64(r.WroteBytes)
	}
	if phys != res.PhysicalOffset+int64(res.WroteBytes) {
		t.Fatalf("batch bytes %d do not add up", res.WroteBytes)
	}
	checkAll(t, s, all)

	t.Run("mixed queues", func(t *testing.T) {
		bad := []PutRequest{*msg{topic: "B", queue: 1, body: "a"}.req(), *msg{topic: "B", queue: 2, body: "b"}.req()}
		if _, err := s.PutMessages(context.Background(), bad); !errors.Is(err, ErrInvalidMessage) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("too large for a segment", func(t *testing.T) {
		var big []PutRequest
		for range 5 {
			big = append(big, *msg{topic: "B", queue: 1, body: body(0, 1000)}.req())
		}
		if _, err := s.PutMessages(context.Background(), big); !errors.Is(err, ErrMessageTooLarge) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestPutValidation(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxMessageSize = 100
	s := openStore(t, cfg)
	cases := []struct {
		name string
		m    msg
		want error
	}{
		{"empty topic", msg{topic: "", body: "x"}, ErrInvalidMessage},
		{"path topic", msg{topic: "../etc", body: "x"}, ErrInvalidMessage},
		{"dot topic", msg{topic: "..", body: "x"}, ErrInvalidMessage},
		{"negative queue", msg{topic: "T", queue: -1, body: "x"}, ErrInvalidMessage},
		{"body too large", msg{topic: "T", body: body(0, 101)}, ErrMessageTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.PutMessage(context.Background(), c.m.req()); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	t.Run("record larger than a segment", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.CommitLogSegmentSize = 1024
		s := openStore(t, cfg)
		if _, err := s.PutMessage(context.Background(), msg{topic: "T", body: body(0, 1000)}.req()); !errors.Is(err, ErrMessageTooLarge) {
			t.Fatalf("got %v", err)
		}
		put(t, s, msg{topic: "T", body: body(0, 500)})
	})
}

// A PREPARED (or ROLLBACK) record is stored with queue offset 0 and is not
// dispatched; a COMMIT record is.
func TestTransactionRecordsDispatch(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	prep := put(t, s, msg{topic: "Tx", body: "half", sys: message.FlagTransactionPrep, uniq: "tx1"})
	if prep.res.QueueOffset != 0 || s.MaxOffset("Tx", 0) != 0 {
		t.Fatalf("prepared record dispatched: %+v max %d", prep.res, s.MaxOffset("Tx", 0))
	}
	commit := put(t, s, msg{topic: "Tx", body: "done", sys: message.FlagTransactionCommit})
	roll := put(t, s, msg{topic: "Tx", body: "gone", sys: message.FlagTransactionRoll, uniq: "tx2"})
	if commit.res.QueueOffset != 0 || s.MaxOffset("Tx", 0) != 1 || roll.res.QueueOffset != 0 {
		t.Fatalf("commit %+v roll %+v max %d", commit.res, roll.res, s.MaxOffset("Tx", 0))
	}
	now := time.Now().UnixMilli()
	if r, _ := s.QueryByKey("Tx", "tx1", 10, 0, now+1000); r.Messages != 1 {
		t.Errorf("prepared record not indexed: %d", r.Messages)
	}
	if r, _ := s.QueryByKey("Tx", "tx2", 10, 0, now+1000); r.Messages != 0 {
		t.Errorf("rollback record indexed: %d", r.Messages)
	}
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, cfg)
	if s2.MaxOffset("Tx", 0) != 1 {
		t.Fatalf("after recovery max %d, want 1", s2.MaxOffset("Tx", 0))
	}
	checkAll(t, s2, []stored{commit})
}

func TestOnDispatch(t *testing.T) {
	cfg := testConfig(t)
	var mu sync.Mutex
	var got []DispatchEvent
	cfg.OnDispatch = func(e DispatchEvent) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}
	s := openStore(t, cfg)
	a := put(t, s, msg{topic: "D", queue: 2, body: "a", tags: "TagA"})
	reqs := []PutRequest{*msg{topic: "D", queue: 2, body: "b"}.req(), *msg{topic: "D", queue: 2, body: "c"}.req()}
	b, err := s.PutMessages(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []DispatchEvent{
		{Topic: "D", QueueID: 2, QueueOffset: 0, TagsCode: message.TagHash("TagA"), PhysicalOffset: a.res.PhysicalOffset, StoreTimestamp: a.res.StoreTimestamp},
		{Topic: "D", QueueID: 2, QueueOffset: 1, PhysicalOffset: b.PhysicalOffsets[0], StoreTimestamp: b.StoreTimestamp},
		{Topic: "D", QueueID: 2, QueueOffset: 2, PhysicalOffset: b.PhysicalOffsets[1], StoreTimestamp: b.StoreTimestamp},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n got %+v\nwant %+v", got, want)
	}
}

func TestOffsetByTimestamp(t *testing.T) {
	cfg := testConfig(t)
	var mu sync.Mutex
	now := int64(1_000_000)
	cfg.Clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.UnixMilli(now)
	}
	s := openStore(t, cfg)
	setNow := func(v int64) { mu.Lock(); now = v; mu.Unlock() }
	// Offsets 0..9 stored at 1000, 2000, ..., 10000 (offset 4 and 5 both at 5000).
	for i := range 10 {
		ts := int64(i+1) * 1000
		if i == 5 {
			ts = 5000
		}
		setNow(ts)
		put(t, s, msg{topic: "Time", body: body(i, 20)})
	}
	cases := []struct {
		ts   int64
		b    Boundary
		want int64
	}{
		{500, BoundaryLower, 0}, {500, BoundaryUpper, 0},
		{1000, BoundaryLower, 0}, {1000, BoundaryUpper, 0},
		{1500, BoundaryLower, 1}, {1500, BoundaryUpper, 0},
		{5000, BoundaryLower, 4}, {5000, BoundaryUpper, 5},
		{10000, BoundaryLower, 9}, {10000, BoundaryUpper, 9},
		{99999, BoundaryLower, 10}, {99999, BoundaryUpper, 9},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/%d", c.ts, c.b), func(t *testing.T) {
			got, err := s.OffsetByTimestamp("Time", 0, c.ts, c.b)
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
	if got, _ := s.OffsetByTimestamp("Nope", 0, 5000, BoundaryLower); got != 0 {
		t.Errorf("unknown queue: %d", got)
	}
	if ts, err := s.EarliestMessageTime("Time", 0); err != nil || ts != 1000 {
		t.Errorf("EarliestMessageTime = %d, %v", ts, err)
	}
	if ts, err := s.MessageStoreTime("Time", 0, 7); err != nil || ts != 8000 {
		t.Errorf("MessageStoreTime = %d, %v", ts, err)
	}
	if _, err := s.EarliestMessageTime("Nope", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("EarliestMessageTime on unknown queue: %v", err)
	}
}

func TestMessageAtInvalidOffsets(t *testing.T) {
	s := openStore(t, testConfig(t))
	a := put(t, s, msg{topic: "V", body: "hello"})
	for _, off := range []int64{-1, 1, a.res.PhysicalOffset + 4, int64(a.res.WroteBytes), 1 << 40} {
		if _, err := s.MessageAt(off); !errors.Is(err, ErrNotFound) {
			t.Errorf("MessageAt(%d): %v", off, err)
		}
		if b, err := s.AppendMessageAt([]byte("x"), off); !errors.Is(err, ErrNotFound) || string(b) != "x" {
			t.Errorf("AppendMessageAt(%d): %q, %v", off, b, err)
		}
	}
}

func TestQueues(t *testing.T) {
	s := openStore(t, testConfig(t))
	put(t, s, msg{topic: "Q1", queue: 0, body: "a"})
	put(t, s, msg{topic: "Q1", queue: 0, body: "b"})
	put(t, s, msg{topic: "Q2", queue: 5, body: "c"})
	got := map[string]QueueInfo{}
	for _, q := range s.Queues() {
		got[fmt.Sprintf("%s/%d", q.Topic, q.QueueID)] = q
	}
	if len(got) != 2 || got["Q1/0"].MaxOffset != 2 || got["Q2/5"].MaxOffset != 1 {
		t.Fatalf("Queues() = %+v", got)
	}
}

func TestDeleteTopic(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	for i := range 5 {
		put(t, s, msg{topic: "Del", body: body(i, 40)})
	}
	keep := put(t, s, msg{topic: "Keep", body: "k"})
	if err := s.DeleteTopic("Del"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "consumequeue", "Del")); !os.IsNotExist(err) {
		t.Fatalf("queue dir still there: %v", err)
	}
	res, _ := s.GetMessages(nil, &GetRequest{Topic: "Del"})
	if res.Status != GetNoMessageInQueue {
		t.Fatalf("after delete: %v", res.Status)
	}
	again := put(t, s, msg{topic: "Del", body: "new"})
	if again.res.QueueOffset != 0 {
		t.Fatalf("re-created topic starts at %d", again.res.QueueOffset)
	}
	// A crash makes recovery walk the log: the deleted messages stay deleted.
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, cfg)
	checkAll(t, s2, []stored{again, keep})
}

func TestLockedDirectory(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	if _, err := Open(cfg); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.PutMessage(context.Background(), msg{topic: "T", body: "x"}.req()); !errors.Is(err, ErrClosed) {
		t.Fatalf("put after close: %v", err)
	}
	if _, err := s.GetMessages(nil, &GetRequest{Topic: "T"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
	openStore(t, cfg)
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"no dir", Config{}},
		{"tiny segment", Config{Dir: t.TempDir(), CommitLogSegmentSize: 100}},
		{"bad flush mode", Config{Dir: t.TempDir(), FlushMode: 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if s, err := Open(c.cfg); err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

// TestPutRecords: records of several queues in one put land back to back,
// each in its own queue at the next offset, indexed under its own topic; a
// record that is not dispatched takes no queue offset; a bad record or a
// wrong count writes nothing.
func TestPutRecords(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	all := []stored{put(t, s, msg{topic: "A", queue: 0, body: "before"})}
	for _, tc := range []struct {
		name string
		ms   []msg
	}{
		{"two queues", []msg{{topic: "A", queue: 0, body: "a1", uniq: "u-a1"}, {topic: "OP", queue: 0, body: "op1", tags: "d", uniq: "u-op1"}}},
		{"new queue and a repeated one", []msg{{topic: "A", queue: 3, body: "a3"}, {topic: "A", queue: 0, body: "a2"}, {topic: "A", queue: 3, body: "a3b", keys: "k1 k2"}}},
		{"prepared record between", []msg{{topic: "A", queue: 0, body: "a4"}, {topic: "HALF", queue: 0, body: "h", sys: message.FlagTransactionPrep}, {topic: "OP", queue: 0, body: "op2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := make([]PutRequest, len(tc.ms))
			for i, m := range tc.ms {
				reqs[i] = *m.req()
			}
			start := s.CommitLogMaxOffset()
			res, err := s.PutRecords(context.Background(), reqs)
			if err != nil {
				t.Fatal(err)
			}
			if res.MsgCount != len(tc.ms) || res.PhysicalOffset != start {
				t.Fatalf("result %+v, want %d records at %d", res, len(tc.ms), start)
			}
			phys := res.PhysicalOffset
			for i, m := range tc.ms {
				qo := s.MaxOffset(m.topic, m.queue) - 1
				for _, later := range tc.ms[i+1:] {
					if later.topic == m.topic && later.queue == m.queue {
						qo--
					}
				}
				if m.sys == message.FlagTransactionPrep {
					qo = 0
				}
				st := stored{m, PutResult{PhysicalOffset: phys, QueueOffset: qo, StoreTimestamp: res.StoreTimestamp}}
				want := st.expectRecord(t)
				got, err := s.MessageAt(phys)
				if err != nil {
					t.Fatalf("record %d: MessageAt(%d): %v", i, phys, err)
				}
				sameBytes(t, fmt.Sprintf("record %d", i), got, want)
				if m.sys != message.FlagTransactionPrep {
					all = append(all, st)
				}
				phys += int64(len(want))
			}
			if phys != res.End() {
				t.Fatalf("records end at %d, result says %d", phys, res.End())
			}
			checkAll(t, s, all)
		})
	}
	if _, err := s.QueryByKey("OP", "u-op1", 0, 0, time.Now().UnixMilli()+1000); err != nil {
		t.Errorf("op record not indexed under its topic: %v", err)
	} else if q, _ := s.QueryByKey("OP", "u-op1", 0, 0, time.Now().UnixMilli()+1000); q.Messages != 1 {
		t.Errorf("op record indexed %d times under its topic, want 1", q.Messages)
	}
	if q, _ := s.QueryByKey("A", "k2", 0, 0, time.Now().UnixMilli()+1000); q.Messages != 1 {
		t.Errorf("keys of the third record: %d hits, want 1", q.Messages)
	}

	end := s.CommitLogMaxOffset()
	for _, tc := range []struct {
		name string
		ms   []msg
	}{
		{"none", nil},
		{"too many", make([]msg, maxRecords+1)},
		{"one bad", []msg{{topic: "A", queue: 0, body: "ok"}, {topic: "../x", queue: 0, body: "x"}}},
		{"bad queue id", []msg{{topic: "A", queue: 0, body: "ok"}, {topic: "OP", queue: -1, body: "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := make([]PutRequest, len(tc.ms))
			for i, m := range tc.ms {
				if m.topic == "" {
					m = msg{topic: "A", body: "x"}
				}
				reqs[i] = *m.req()
			}
			if _, err := s.PutRecords(context.Background(), reqs); !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("got %v, want ErrInvalidMessage", err)
			}
			if got := s.CommitLogMaxOffset(); got != end {
				t.Fatalf("commit log grew from %d to %d", end, got)
			}
			checkAll(t, s, all)
		})
	}
}
