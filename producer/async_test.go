package producer

import (
	"context"
	"crypto/rand"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func TestAsyncRetriesLikeSync(t *testing.T) {
	env := newMockProducer(t, nil)
	var n atomic.Int32
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(context.Context, string, *remoting.Command, time.Duration) (*remoting.Command, error) {
			if n.Inc() == 1 {
				return remoting.NewResponse(remoting.SystemBusy, ""), nil
			}
			return okResp(remoting.Success, 0, 9), nil
		}).Times(2)
	type out struct {
		res *rocketmq.SendResult
		err error
	}
	done := make(chan out, 2)
	err := env.p.SendAsync(context.Background(), func(r *rocketmq.SendResult, err error) { done <- out{r, err} }, &rocketmq.Message{Topic: "T", Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.QueueOffset != 9 {
		t.Fatalf("callback %+v %v", o.res, o.err)
	}
	select {
	case <-done:
		t.Fatal("callback called twice")
	case <-time.After(20 * time.Millisecond):
	}
	// Invalid messages fail at once, without a callback.
	if err := env.p.SendAsync(context.Background(), func(*rocketmq.SendResult, error) { t.Error("callback for invalid message") }, &rocketmq.Message{Topic: "T", Body: nil}); !errors.Is(err, rocketmq.ErrNilBody) {
		t.Fatalf("err = %v", err)
	}
}

func TestAsyncInflightBound(t *testing.T) {
	for _, failFast := range []bool{true, false} {
		name := "wait"
		if failFast {
			name = "fail fast"
		}
		t.Run(name, func(t *testing.T) {
			env := newMockProducer(t, nil, WithAsyncInflight(1, 1<<20, failFast))
			release := make(chan struct{})
			env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
				func(context.Context, string, *remoting.Command, time.Duration) (*remoting.Command, error) {
					<-release
					return okResp(remoting.Success, 0, 0), nil
				}).Times(2)
			done := make(chan error, 2)
			cb := func(_ *rocketmq.SendResult, err error) { done <- err }
			if err := env.p.SendAsync(context.Background(), cb, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			err := env.p.SendAsync(ctx, cb, &rocketmq.Message{Topic: "T", Body: []byte("y")})
			cancel()
			if !errors.Is(err, ErrTooManyInflight) || !failFast && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v", err)
			}
			// A waiting send gets the slot once the first completes.
			second := make(chan error, 1)
			go func() {
				second <- env.p.SendAsync(context.Background(), cb, &rocketmq.Message{Topic: "T", Body: []byte("z")})
			}()
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := <-second; err != nil && !failFast {
				t.Fatal(err)
			} else if err == nil {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			} else {
				// fail fast may race the release; send again now that the slot is free
				testutil.WaitFor(t, time.Second, "free slot", func() bool {
					return env.p.SendAsync(context.Background(), cb, &rocketmq.Message{Topic: "T", Body: []byte("z")}) == nil
				})
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestAsyncBurst sends 100 MiB as 100 async 1 MiB messages with at most 4
// in flight: no deadlock, the bound holds and the heap stays far below
// the burst size.
func TestAsyncBurst(t *testing.T) {
	const (
		size  = 1 << 20
		count = 100
		bound = 4
	)
	env := newMockProducer(t, nil, WithAsyncInflight(bound, 8<<20, false), WithCompression(16<<20, 5), WithMaxMessageSize(2<<20))
	var cur, peak atomic.Int32
	var heapPeak atomic.Uint64
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(context.Context, string, *remoting.Command, time.Duration) (*remoting.Command, error) {
			c := cur.Inc()
			for {
				p := peak.Load()
				if c <= p || peak.CAS(p, c) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			cur.Dec()
			return okResp(remoting.Success, 0, 0), nil
		}).Times(count)
	src := make([]byte, size)
	_, _ = rand.Read(src)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var wg sync.WaitGroup
	wg.Add(count)
	var failed atomic.Int32
	cb := func(_ *rocketmq.SendResult, err error) {
		if err != nil {
			failed.Inc()
		}
		wg.Done()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < count; i++ {
		body := make([]byte, size)
		copy(body, src)
		if err := env.p.SendAsync(ctx, cb, &rocketmq.Message{Topic: "T", Body: body}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > heapPeak.Load() {
				heapPeak.Store(m.HeapAlloc)
			}
		}
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d sends failed", failed.Load())
	}
	if peak.Load() > bound {
		t.Fatalf("%d sends in flight, bound %d", peak.Load(), bound)
	}
	if grow := int64(heapPeak.Load()) - int64(base); grow > 60<<20 {
		t.Fatalf("heap grew by %d MiB during a 100 MiB burst", grow>>20)
	}
}
