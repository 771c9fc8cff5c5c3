package broker

import (
	"fmt"
	"sync"
	"time"

	"go.uber.org/atomic"
)

// brokerStats counts what GET_BROKER_RUNTIME_INFO reports: messages put and
// messages handed to consumers, with per-second samples for the TPS figures
// and the day-start totals Java's BrokerStats keeps.
type brokerStats struct {
	boot time.Time

	put     atomic.Int64 // messages stored by sends
	putSize atomic.Int64 // bytes written by sends
	get     atomic.Int64 // messages returned by pulls (addGet)

	mu      sync.Mutex
	samples [statsSamples]statsSample // ring, one per second
	next    int
	filled  int
	day     int // yearday*10000+year of the last day roll
	// Totals at the start of today and yesterday (Java BrokerStats).
	putToday, putYesterday int64
	getToday, getYesterday int64
}

// statsSamples covers the longest TPS window (600 s) plus one.
const statsSamples = 601

type statsSample struct {
	at       time.Time
	put, get int64
}

func newBrokerStats(now time.Time) *brokerStats {
	s := &brokerStats{boot: now}
	s.day = dayKey(now)
	return s
}

// addPut records stored messages.
func (s *brokerStats) addPut(msgs, bytes int) {
	s.put.Add(int64(msgs))
	s.putSize.Add(int64(bytes))
}

// addGet records messages returned to consumers; the pull path calls it.
func (s *brokerStats) addGet(msgs int) { s.get.Add(int64(msgs)) }

func dayKey(t time.Time) int { return t.Year()*1000 + t.YearDay() }

// sample takes one TPS sample; the broker calls it every second.
func (s *brokerStats) sample(now time.Time) {
	put, get := s.put.Load(), s.get.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples[s.next] = statsSample{at: now, put: put, get: get}
	s.next = (s.next + 1) % statsSamples
	if s.filled < statsSamples {
		s.filled++
	}
	if d := dayKey(now); d != s.day {
		s.day = d
		s.putYesterday, s.putToday = s.putToday, put
		s.getYesterday, s.getToday = s.getToday, get
	}
}

// tps formats the rates over the last 10 s, 60 s and 600 s like Java's
// StoreStatsService ("%.2f %.2f %.2f"); pick selects the counter.
func (s *brokerStats) tps(now time.Time, cur int64, pick func(statsSample) int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r [3]float64
	for i, w := range [3]time.Duration{10 * time.Second, time.Minute, 10 * time.Minute} {
		r[i] = s.rateLocked(now, cur, w, pick)
	}
	return fmt.Sprintf("%.2f %.2f %.2f", r[0], r[1], r[2])
}

// rateLocked is the rate since the oldest sample within w (or since boot).
func (s *brokerStats) rateLocked(now time.Time, cur int64, w time.Duration, pick func(statsSample) int64) float64 {
	base, at := int64(0), s.boot
	for i := 1; i <= s.filled; i++ {
		sm := s.samples[(s.next-i+statsSamples)%statsSamples]
		if now.Sub(sm.at) > w {
			break
		}
		base, at = pick(sm), sm.at
	}
	secs := now.Sub(at).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(cur-base) / secs
}

// dayTotals returns the put and get totals at the start of yesterday and
// today.
func (s *brokerStats) dayTotals() (putYesterday, putToday, getYesterday, getToday int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putYesterday, s.putToday, s.getYesterday, s.getToday
}
