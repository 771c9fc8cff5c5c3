package console

import (
	"context"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

// Dashboard bounds: an hour of history, a TPS point at most every
// dashTPSEvery (360 points), a topic snapshot at most every
// Config.DashboardSample (61 kept), and at most dashTopics topics counted.
const (
	dashWindow   = time.Hour
	dashTPSEvery = 10 * time.Second
	dashTPSMax   = int(dashWindow / dashTPSEvery)
	dashSnapsMax = 61
	dashTopics   = 500
	dashParallel = 8
	dashTop      = 10
)

// dashboard is the in-memory history behind the dashboard page. It grows
// only while the page (or /api/dashboard) is polled.
type dashboard struct {
	mu     sync.Mutex
	tps    []tpsPoint
	snaps  []topicSnap
	taking bool // a snapshot is being read
}

type tpsPoint struct {
	at      int64 // unix ms
	brokers map[string][2]float64
}

type topicSnap struct {
	at     time.Time
	totals map[string]int64 // topic → messages stored (sum of max offsets)
}

// addTPS records the masters' TPS unless the last point is recent.
func (d *dashboard) addTPS(now time.Time, rows []brokerRow) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.tps); n > 0 && now.UnixMilli()-d.tps[n-1].at < dashTPSEvery.Milliseconds() {
		return
	}
	p := tpsPoint{at: now.UnixMilli(), brokers: map[string][2]float64{}}
	for _, b := range rows {
		if b.ID == 0 && b.Err == "" {
			p.brokers[b.Name] = [2]float64{b.PutTPS, b.GetTPS}
		}
	}
	d.tps = append(d.tps, p)
	if len(d.tps) > dashTPSMax {
		d.tps = slices.Delete(d.tps, 0, len(d.tps)-dashTPSMax)
	}
}

// snapshotDue reports whether a topic snapshot should be taken now, and
// if so claims it.
func (d *dashboard) snapshotDue(now time.Time, every time.Duration) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.taking || (len(d.snaps) > 0 && now.Sub(d.snaps[len(d.snaps)-1].at) < every) {
		return false
	}
	d.taking = true
	return true
}

func (d *dashboard) addSnap(s *topicSnap) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.taking = false
	if s == nil {
		return
	}
	d.snaps = append(d.snaps, *s)
	cut := 0
	for cut < len(d.snaps)-1 && s.at.Sub(d.snaps[cut+1].at) >= dashWindow {
		cut++ // keep one snapshot at least an hour old as the base
	}
	d.snaps = slices.Delete(d.snaps, 0, max(cut, len(d.snaps)-dashSnapsMax))
}

// top returns the topics with the most messages between the oldest kept
// snapshot and the newest, and how long that span is.
func (d *dashboard) top(n int) ([]bar, time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.snaps) < 2 {
		return nil, 0
	}
	first, last := d.snaps[0], d.snaps[len(d.snaps)-1]
	var bars []bar
	for t, v := range last.totals {
		if diff := v - first.totals[t]; diff > 0 {
			bars = append(bars, bar{t, float64(diff)})
		}
	}
	sort.Slice(bars, func(i, j int) bool {
		if bars[i].Value != bars[j].Value {
			return bars[i].Value > bars[j].Value
		}
		return bars[i].Name < bars[j].Name
	})
	return bars[:min(n, len(bars))], last.at.Sub(first.at)
}

// tpsChart draws each master's put and get TPS over the kept hour.
func (d *dashboard) tpsChart() template.HTML {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := map[string]bool{}
	for _, p := range d.tps {
		for b := range p.brokers {
			names[b] = true
		}
	}
	var series []chartSeries
	for _, b := range slices.Sorted(maps.Keys(names)) {
		put, get := chartSeries{Name: b + " put"}, chartSeries{Name: b + " get"}
		for _, p := range d.tps {
			if v, ok := p.brokers[b]; ok {
				put.Points = append(put.Points, [2]float64{float64(p.at), v[0]})
				get.Points = append(get.Points, [2]float64{float64(p.at), v[1]})
			}
		}
		series = append(series, put, get)
	}
	return lineChart("Broker put and get TPS", series)
}

// takeSnapshot reads the stored-message count of up to dashTopics
// ordinary topics.
func (s *Server) takeSnapshot(ctx context.Context) *topicSnap {
	all, err := s.cache.topics(ctx, s.cfg.Admin)
	if err != nil {
		return nil
	}
	var topics []string
	for _, t := range all {
		if !rocketmq.IsSystemTopic(t) && !rocketmq.IsRetryTopic(t) && !rocketmq.IsDLQTopic(t) {
			topics = append(topics, t)
		}
		if len(topics) == dashTopics {
			break
		}
	}
	snap := &topicSnap{at: s.now(), totals: make(map[string]int64, len(topics))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, dashParallel)
	for _, t := range topics {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			st, err := s.cfg.Admin.TopicStats(ctx, t)
			if err != nil {
				return
			}
			var n int64
			for _, o := range st {
				n += o.MaxOffset
			}
			mu.Lock()
			snap.totals[t] = n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return snap
}

type dashJSON struct {
	PutTPS   float64       `json:"putTps"`
	GetTPS   float64       `json:"getTps"`
	TPSChart template.HTML `json:"tpsChart"`
	TopChart template.HTML `json:"topChart"`
	Top      []topJSON     `json:"top"`
	Span     string        `json:"span"`
	Error    string        `json:"error,omitempty"`
}

type topJSON struct {
	Topic    string `json:"topic"`
	Messages int64  `json:"messages"`
}

// dashboardData samples what is due and returns the dashboard.
func (s *Server) dashboardData(ctx context.Context) (*dashJSON, error) {
	rows, err := s.brokerRows(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	s.dash.addTPS(now, rows)
	if s.dash.snapshotDue(now, s.sampleEvery) {
		s.dash.addSnap(s.takeSnapshot(ctx))
	}
	out := &dashJSON{TPSChart: s.dash.tpsChart(), Top: []topJSON{}}
	for _, b := range rows {
		if b.ID == 0 {
			out.PutTPS += b.PutTPS
			out.GetTPS += b.GetTPS
		}
	}
	bars, span := s.dash.top(dashTop)
	for _, b := range bars {
		out.Top = append(out.Top, topJSON{b.Name, int64(b.Value)})
	}
	label := "Top topics by messages"
	if span > 0 {
		out.Span = span.Round(time.Second).String()
		label += " in the last " + out.Span
	}
	out.TopChart = barChart(label, bars)
	return out, nil
}

// dashboardPage is GET /dashboard.
func (s *Server) dashboardPage(ctx context.Context, r *http.Request, v *view) {
	v.Page = "dashboard"
	d, err := s.dashboardData(ctx)
	if err != nil {
		s.fail(v, err)
		d = &dashJSON{TPSChart: lineChart("Broker put and get TPS", nil), TopChart: barChart("Top topics by messages", nil)}
	}
	v.Data = d
}

// apiDashboard is GET /api/dashboard.
func (s *Server) apiDashboard(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	d, err := s.dashboardData(ctx)
	if err != nil {
		writeJSON(w, statusOf(err), dashJSON{Error: err.Error(), Top: []topJSON{}})
		return
	}
	writeJSON(w, http.StatusOK, d)
}
