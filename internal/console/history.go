package console

import (
	"sync"
	"time"
)

// History bounds: points per series (at the pages' 2 s poll, 5 minutes)
// and series kept (least recently updated dropped first).
const (
	historyPoints = 150
	historySeries = 64
)

// history keeps the last points of each chart series in memory. A point
// is added only when a page polls, so an idle console holds and costs
// nothing.
type history struct {
	mu     sync.Mutex
	series map[string]*series
}

type series struct {
	at  time.Time
	pts [][3]int64
}

func newHistory() *history { return &history{series: make(map[string]*series)} }

func (h *history) push(key string, p [3]int64, now time.Time) [][3]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.series[key]
	if s == nil {
		if len(h.series) >= historySeries {
			var oldest string
			for k, x := range h.series {
				if oldest == "" || x.at.Before(h.series[oldest].at) {
					oldest = k
				}
			}
			delete(h.series, oldest)
		}
		s = &series{}
		h.series[key] = s
	}
	s.at = now
	if len(s.pts) >= historyPoints {
		s.pts = append(s.pts[:0], s.pts[len(s.pts)-historyPoints+1:]...)
	}
	s.pts = append(s.pts, p)
	return append([][3]int64(nil), s.pts...)
}

// add records one value and returns the series as [ms, value] pairs.
func (h *history) add(key string, now time.Time, v int64) [][2]int64 {
	pts := h.push(key, [3]int64{now.UnixMilli(), v}, now)
	out := make([][2]int64, len(pts))
	for i, p := range pts {
		out[i] = [2]int64{p[0], p[1]}
	}
	return out
}

// add2 records two values.
func (h *history) add2(key string, now time.Time, a, b int64) [][3]int64 {
	return h.push(key, [3]int64{now.UnixMilli(), a, b}, now)
}

// get returns a series without adding to it.
func (h *history) get(key string) [][3]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.series[key]; s != nil {
		return append([][3]int64(nil), s.pts...)
	}
	return nil
}
