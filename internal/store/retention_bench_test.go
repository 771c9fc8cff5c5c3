package store

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkSendDuringRetention measures the latency of PutMessage with 64
// concurrent callers, without and with retention deleting commit-log files
// meanwhile: 8 full 16 MiB segments written before the timer starts, and
// every segment the run fills, are deleted as soon as they are flushed
// (the disk reads 90%: the forcible ratio, no pause between files). A
// deletion unmaps written pages and unlinks the file; the append lock is
// only held to drop the file from the list.
func BenchmarkSendDuringRetention(b *testing.B) {
	for _, pass := range []bool{false, true} {
		b.Run("pass="+strconv.FormatBool(pass), func(b *testing.B) {
			const segSize, callers = 16 << 20, 64
			cfg := benchConfig(b, FlushAsync)
			cfg.CommitLogSegmentSize = segSize
			cfg.FlushInterval = 50 * time.Millisecond
			cfg.DeleteCommitLogFilesInterval = -1
			pct := uint64(30)
			if pass {
				pct = 90
			}
			cfg.DiskUsage = func(string) (uint64, uint64, error) { return pct, 100, nil }
			s, err := Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			r := benchRequest(0, 1024)
			for s.CommitLogMaxOffset() < 8*segSize {
				if _, err := s.PutMessage(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			for {
				s.RequestFlush()
				if f, _ := s.FlushProgress(); f >= s.CommitLogMaxOffset() {
					break
				}
				time.Sleep(time.Millisecond)
			}

			stop := make(chan struct{})
			var cleaner sync.WaitGroup
			deleted := 0
			b.SetBytes(1024)
			b.ResetTimer()
			if pass {
				cleaner.Add(1)
				go func() {
					defer cleaner.Done()
					for {
						res := s.Clean()
						deleted += res.CommitLogFiles
						if res.CommitLogFiles > 0 {
							continue
						}
						select {
						case <-stop:
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
				}()
			}
			lat := make([][]time.Duration, callers)
			var wg sync.WaitGroup
			per := b.N/callers + 1
			for c := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := benchRequest(int32(c&7), 1024)
					l := make([]time.Duration, 0, per)
					for range per {
						t0 := time.Now()
						if _, err := s.PutMessage(ctx, req); err != nil {
							b.Error(err)
							return
						}
						l = append(l, time.Since(t0))
					}
					lat[c] = l
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(stop)
			cleaner.Wait()
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) == 0 {
				return
			}
			at := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))].Microseconds()) }
			b.ReportMetric(at(0.5), "p50-µs")
			b.ReportMetric(at(0.99), "p99-µs")
			b.ReportMetric(at(0.999), "p99.9-µs")
			b.ReportMetric(float64(deleted), "files-deleted")
		})
	}
}
