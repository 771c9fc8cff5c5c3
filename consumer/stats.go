package consumer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Consume statistics (Java ConsumerStatsManager): per topic, one-second
// buckets over the last minute plus totals. Retried messages count under
// their original topic. Updates are atomic adds; a bucket is cleared under
// a mutex once per second when it is reused.

const statWindow = 60 // seconds

type statBucket struct {
	sec                                            atomic.Int64
	pulled, pullRT, pulls, ok, failed, crt, consum atomic.Int64
}

type topicStats struct {
	mu          sync.Mutex
	b           [statWindow]statBucket
	okTotal     atomic.Int64
	failedTotal atomic.Int64
}

type statsTable struct {
	mu     sync.RWMutex
	topics map[string]*topicStats
}

func newStatsTable() *statsTable { return &statsTable{topics: map[string]*topicStats{}} }

func (t *statsTable) topic(wireTopic string) *topicStats {
	t.mu.RLock()
	ts := t.topics[wireTopic]
	t.mu.RUnlock()
	if ts != nil {
		return ts
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts = t.topics[wireTopic]; ts == nil {
		ts = &topicStats{}
		t.topics[wireTopic] = ts
	}
	return ts
}

func (ts *topicStats) bucket(sec int64) *statBucket {
	b := &ts.b[sec%statWindow]
	if b.sec.Load() != sec {
		ts.mu.Lock()
		if b.sec.Load() != sec {
			b.pulled.Store(0)
			b.pullRT.Store(0)
			b.pulls.Store(0)
			b.ok.Store(0)
			b.failed.Store(0)
			b.crt.Store(0)
			b.consum.Store(0)
			b.sec.Store(sec)
		}
		ts.mu.Unlock()
	}
	return b
}

// pulled counts one pull of n messages that took rt.
func (t *statsTable) pulled(wireTopic string, n int, rt time.Duration) {
	if rocketmq.IsRetryTopic(wireTopic) {
		// Retried messages are counted when consumed, under their topic.
		return
	}
	b := t.topic(wireTopic).bucket(time.Now().Unix())
	b.pulled.Add(int64(n))
	b.pullRT.Add(int64(rt))
	b.pulls.Add(1)
}

// consumed counts one handler batch, ended at sec (unix seconds).
func (ts *topicStats) consumed(sec int64, ok, failed int, rt time.Duration) {
	b := ts.bucket(sec)
	b.ok.Add(int64(ok))
	b.failed.Add(int64(failed))
	b.crt.Add(int64(rt))
	b.consum.Add(1)
	ts.okTotal.Add(int64(ok))
	ts.failedTotal.Add(int64(failed))
}

type statSums struct{ pulled, pullRT, pulls, ok, failed, crt, consum int64 }

func (t *statsTable) sums(wireTopic string) (statSums, *topicStats) {
	t.mu.RLock()
	ts := t.topics[wireTopic]
	t.mu.RUnlock()
	var s statSums
	if ts == nil {
		return s, nil
	}
	now := time.Now().Unix()
	for i := range ts.b {
		b := &ts.b[i]
		if sec := b.sec.Load(); sec > now-statWindow && sec <= now {
			s.pulled += b.pulled.Load()
			s.pullRT += b.pullRT.Load()
			s.pulls += b.pulls.Load()
			s.ok += b.ok.Load()
			s.failed += b.failed.Load()
			s.crt += b.crt.Load()
			s.consum += b.consum.Load()
		}
	}
	return s, ts
}

func mean(sum, n int64) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(sum / n)
}

func (t *statsTable) fill(wireTopic string, st *Stats) {
	s, ts := t.sums(wireTopic)
	if ts == nil {
		return
	}
	st.PullTPS = float64(s.pulled) / statWindow
	st.PullRT = mean(s.pullRT, s.pulls)
	st.ConsumeRT = mean(s.crt, s.consum)
	st.OKTPS = float64(s.ok) / statWindow
	st.FailedTPS = float64(s.failed) / statWindow
	st.OKTotal = ts.okTotal.Load()
	st.FailedTotal = ts.failedTotal.Load()
}

// status is the topic's ConsumeStatus for RunningInfo (RTs in ms, as Java).
func (t *statsTable) status(wireTopic string) remoting.ConsumeStatus {
	var st Stats
	t.fill(wireTopic, &st)
	return remoting.ConsumeStatus{
		PullRT:            float64(st.PullRT) / float64(time.Millisecond),
		PullTPS:           st.PullTPS,
		ConsumeRT:         float64(st.ConsumeRT) / float64(time.Millisecond),
		ConsumeOKTPS:      st.OKTPS,
		ConsumeFailedTPS:  st.FailedTPS,
		ConsumeFailedMsgs: st.FailedTotal,
	}
}
