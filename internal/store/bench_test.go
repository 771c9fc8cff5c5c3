package store

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// cpuMeter reports process CPU time (user+system, all goroutines including
// the flusher and prefaulter) per operation.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{cpuTime()} }

func (m cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64(cpuTime()-m.start)/float64(b.N), "cpu-ns/op")
}

// benchConfig uses the production segment geometry scaled down to 64 MiB so
// a benchmark run crosses a few segments without filling the disk.
func benchConfig(b *testing.B, mode FlushMode) Config {
	return Config{
		Dir:                  b.TempDir(),
		CommitLogSegmentSize: 64 << 20,
		IndexSlots:           1 << 16,
		IndexEntries:         1 << 20,
		FlushMode:            mode,
	}
}

func benchRequest(queue int32, size int) *PutRequest {
	r := msg{topic: "BenchTopic", queue: queue, body: body(0, size), tags: "TagA", uniq: "C0A8000A30391B6D358600A1B2C30001"}.req()
	return r
}

func BenchmarkPutMessage1KiB(b *testing.B) {
	s, err := Open(benchConfig(b, FlushAsync))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := benchRequest(0, 1024)
	ctx := context.Background()
	b.SetBytes(1024)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		r.QueueID = int32(i & 7)
		if _, err := s.PutMessage(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

func BenchmarkPutMessage1KiBParallel(b *testing.B) {
	s, err := Open(benchConfig(b, FlushAsync))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.SetBytes(1024)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	defer cpu.report(b)
	b.RunParallel(func(pb *testing.PB) {
		r := benchRequest(0, 1024)
		i := 0
		for pb.Next() {
			r.QueueID = int32(i & 7)
			i++
			if _, err := s.PutMessage(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// 64 concurrent producers waiting for a synchronous flush each.
func BenchmarkPutMessageSyncParallel64(b *testing.B) {
	s, err := Open(benchConfig(b, FlushSync))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	before := s.Stats().CommitLogSyncs
	b.SetBytes(1024)
	b.ReportAllocs()
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	start := time.Now()
	b.ResetTimer()
	cpu := startCPU()
	b.RunParallel(func(pb *testing.PB) {
		r := benchRequest(0, 1024)
		for pb.Next() {
			res, err := s.PutMessage(ctx, r)
			if err != nil || res.Status != PutOK {
				b.Errorf("%v %v", res.Status, err)
				return
			}
		}
	})
	b.StopTimer()
	cpu.report(b)
	if syncs := s.Stats().CommitLogSyncs - before; syncs > 0 {
		b.ReportMetric(float64(b.N)/float64(syncs), "msgs/sync")
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

func BenchmarkGetMessages(b *testing.B) {
	s, err := Open(benchConfig(b, FlushAsync))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const n = 4096
	for i := range n {
		if _, err := s.PutMessage(ctx, benchRequest(int32(i&3), 1024)); err != nil {
			b.Fatal(err)
		}
	}
	req := &GetRequest{Topic: "BenchTopic", MaxMessages: 32}
	filter := func(c int64) bool { return c == message.TagHash("TagA") }
	req.Filter = filter
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	defer cpu.report(b)
	for i := 0; i < b.N; i++ {
		req.QueueID = int32(i & 3)
		req.Offset = int64(i*32) % (n/4 - 32)
		res, err := s.GetMessages(buf[:0], req)
		if err != nil || res.Status != GetFound || res.Messages != 32 {
			b.Fatalf("%v %v %d", res.Status, err, res.Messages)
		}
	}
	b.SetBytes(32 * 1024)
}

// BenchmarkSyncAfterWrite32KiB is one group commit: 32 KiB appended (about
// 26 1 KiB messages), then fdatasync. Appending through the mapping makes
// the sync several times slower than writing the same bytes with pwrite,
// which is why FlushSync appends use pwrite (see appendLocked).
func BenchmarkSyncAfterWrite32KiB(b *testing.B) {
	const size = 64 << 20
	chunk := make([]byte, 32<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for _, via := range []string{"mapping", "pwrite"} {
		b.Run(via, func(b *testing.B) {
			dir := b.TempDir()
			var m *mappedFile
			off := int64(size)
			defer func() {
				if m != nil {
					m.close()
				}
			}()
			b.SetBytes(int64(len(chunk)))
			for i := 0; b.Loop(); i++ {
				if off+int64(len(chunk)) > size {
					if m != nil {
						m.close()
					}
					var err error
					if m, err = openMapped(filepath.Join(dir, strconv.Itoa(i)), 0, size, mapCreate); err != nil {
						b.Fatal(err)
					}
					off = 0
				}
				if via == "mapping" {
					copy(m.data[off:], chunk)
				} else if err := m.writeAt(chunk, off); err != nil {
					b.Fatal(err)
				}
				off += int64(len(chunk))
				if err := m.sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQueryByKey1M looks up one key among 1,000,000 indexed messages
// (each with a UNIQ_KEY and a key of its own) in the default index
// geometry.
func BenchmarkQueryByKey1M(b *testing.B) {
	const n = 1_000_000
	cfg := benchConfig(b, FlushAsync)
	cfg.CommitLogSegmentSize = 256 << 20
	cfg.IndexSlots, cfg.IndexEntries = 0, 0 // the defaults
	s, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		r := msg{topic: "BenchTopic", queue: int32(i & 7), body: body(i, 100), tags: "TagA",
			uniq: "C0A8000A30391B6D3586" + strconv.Itoa(10_000_000_000+i), keys: "order-" + strconv.Itoa(i)}.req()
		if _, err := s.PutMessage(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	end := time.Now().Add(time.Hour).UnixMilli()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := (i * 7919) % n
		res, err := s.QueryByKey("BenchTopic", "order-"+strconv.Itoa(k), 32, 0, end)
		if err != nil || res.Messages != 1 {
			b.Fatalf("order-%d: %d messages, %v", k, res.Messages, err)
		}
	}
}
