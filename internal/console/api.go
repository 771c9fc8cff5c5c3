package console

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"

	"github.com/go-rocketmq/rocketmq"
)

type statsJSON struct {
	Time    int64       `json:"time"`
	PutTPS  float64     `json:"putTps"`
	GetTPS  float64     `json:"getTps"`
	Brokers []brokerTPS `json:"brokers"`
	// History is [unix ms, put TPS ×100, get TPS ×100] of the last polls.
	History [][3]int64 `json:"history"`
	// Chart is the SVG of the history.
	Chart template.HTML `json:"chart"`
	Error string        `json:"error,omitempty"`
}

type brokerTPS struct {
	Name   string  `json:"name"`
	Addr   string  `json:"addr"`
	PutTPS float64 `json:"putTps"`
	GetTPS float64 `json:"getTps"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiStats is GET /api/stats: the cluster's put and get TPS (sum over the
// masters) and their recent history.
func (s *Server) apiStats(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	rows, err := s.brokerRows(ctx)
	if err != nil {
		writeJSON(w, statusOf(err), statsJSON{Error: err.Error(), Brokers: []brokerTPS{}})
		return
	}
	now := s.now()
	out := statsJSON{Time: now.UnixMilli(), Brokers: []brokerTPS{}}
	for _, b := range rows {
		if b.ID != 0 {
			continue
		}
		out.PutTPS += b.PutTPS
		out.GetTPS += b.GetTPS
		out.Brokers = append(out.Brokers, brokerTPS{b.Name, b.Addr, b.PutTPS, b.GetTPS})
	}
	out.History = s.hist.add2("tps", now, int64(out.PutTPS*100), int64(out.GetTPS*100))
	out.Chart = tpsChart(out.History)
	writeJSON(w, http.StatusOK, out)
}

// apiLag is GET /api/groups/{group}/lag.
func (s *Server) apiLag(w http.ResponseWriter, r *http.Request) {
	g := r.PathValue("group")
	if err := rocketmq.ValidateGroup(g); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	l, err := s.lag(ctx, g)
	if err != nil {
		writeJSON(w, statusOf(err), map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// tpsChart draws a [ms, put ×100, get ×100] history.
func tpsChart(h [][3]int64) template.HTML {
	put, get := chartSeries{Name: "Put TPS"}, chartSeries{Name: "Get TPS"}
	for _, p := range h {
		put.Points = append(put.Points, [2]float64{float64(p[0]), float64(p[1]) / 100})
		get.Points = append(get.Points, [2]float64{float64(p[0]), float64(p[2]) / 100})
	}
	return lineChart("Put and get TPS", []chartSeries{put, get})
}

// lagChart draws a [ms, lag] history.
func lagChart(h [][2]int64) template.HTML {
	lag := chartSeries{Name: "Lag"}
	for _, p := range h {
		lag.Points = append(lag.Points, [2]float64{float64(p[0]), float64(p[1])})
	}
	return lineChart("Lag", []chartSeries{lag})
}
