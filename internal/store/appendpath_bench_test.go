package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAppendPath32KiB compares ways of getting 32 KiB (a batch of 32
// 1 KiB messages) into fresh pages of a commit-log file, each variant on
// files it creates, fills and removes (64 MiB each, so every page is new):
//
//   - mapping: copy into the mapping, each page faulted in by the copy;
//   - prefault-N: copy into the mapping with MADV_POPULATE_WRITE N ahead of
//     the write position, done by the writer itself so that its cost is in
//     the figures (the store's prefaulter does it on another goroutine, in
//     the same process);
//   - pwrite: pwrite into the file, which also maps it for reads;
//   - ...-falloc: the same on a file whose blocks were reserved with
//     fallocate first (Config.Preallocate), outside the measured time.
//
// cpu-ns/op is the process's CPU (user+system) per 32 KiB, what the
// broker's CPU per message measures; ns/op is wall time.
func BenchmarkAppendPath32KiB(b *testing.B) {
	const size = 64 << 20
	chunk := make([]byte, 32<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	type variant struct {
		name     string
		falloc   bool
		pwrite   bool
		prefault int64
	}
	var vs []variant
	for _, falloc := range []bool{false, true} {
		sfx := ""
		if falloc {
			sfx = "-falloc"
		}
		vs = append(vs,
			variant{name: "mapping" + sfx, falloc: falloc},
			variant{name: "prefault-1MiB" + sfx, falloc: falloc, prefault: 1 << 20},
			variant{name: "prefault-8MiB" + sfx, falloc: falloc, prefault: 8 << 20},
			variant{name: "pwrite" + sfx, falloc: falloc, pwrite: true})
	}
	for _, v := range vs {
		b.Run(v.name, func(b *testing.B) {
			dir := b.TempDir()
			var m *mappedFile
			var off, faulted int64
			var cpu time.Duration
			open := func(i int) {
				b.StopTimer()
				if m != nil {
					m.close()
					os.Remove(m.path)
				}
				var err error
				if m, err = openMapped(filepath.Join(dir, strconv.Itoa(i)), 0, size, mapCreate); err != nil {
					b.Fatal(err)
				}
				if v.falloc {
					if err := allocateRange(m.f, 0, size); err != nil && !errors.Is(err, errUnsupported) {
						b.Fatal(err)
					}
				}
				off, faulted = 0, 0
				b.StartTimer()
			}
			defer func() {
				if m != nil {
					m.close()
				}
			}()
			b.SetBytes(int64(len(chunk)))
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				if m == nil || off+int64(len(chunk)) > size {
					c := cpuTime()
					open(i)
					cpu0 += cpuTime() - c // the file's creation is not measured
				}
				if v.prefault > 0 && off+v.prefault/2 > faulted {
					lo := max(faulted, off+pageSize)
					hi := min(off+v.prefault, size)
					if lo < hi {
						populateWrite(m.data[lo:hi])
					}
					faulted = hi
				}
				if v.pwrite {
					if err := m.writeAt(chunk, off); err != nil {
						b.Fatal(err)
					}
				} else {
					copy(m.data[off:], chunk)
				}
				off += int64(len(chunk))
			}
			cpu = cpuTime() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
