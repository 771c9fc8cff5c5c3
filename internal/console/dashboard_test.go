package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestDashboard: the dashboard counts the messages sent to each topic
// between samples, lists the top topics with a bar chart, and draws the
// brokers' TPS.
func TestDashboard(t *testing.T) {
	e := start(t)
	e.serve(t, Config{Admin: e.adm, DashboardSample: 50 * time.Millisecond})
	a, b := name(t, "DA"), name(t, "DB")
	e.createTopic(t, a, 2)
	e.createTopic(t, b, 1)
	get := func() dashJSON {
		t.Helper()
		resp, err := e.cli.Get(e.http.URL + "/api/dashboard")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var d dashJSON
		if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	get() // the first snapshot
	e.send(t, a, "pg_"+a, 5)
	e.send(t, b, "pg_"+b, 2)
	var d dashJSON
	testutil.WaitFor(t, wait, "both topics counted", func() bool {
		d = get()
		return len(d.Top) >= 2
	})
	if d.Top[0] != (topJSON{a, 5}) || d.Top[1] != (topJSON{b, 2}) || d.Span == "" {
		t.Fatalf("top %+v over %q", d.Top, d.Span)
	}
	if !strings.Contains(string(d.TopChart), `data-name="`+a+`"`) || !strings.Contains(string(d.TPSChart), "broker-a put") {
		t.Errorf("charts without the topic or the broker: %s %s", d.TopChart, d.TPSChart)
	}
	p := e.get(t, "/dashboard")
	if v, _ := cell(p.body, "data-topic", a, "messages"); v != "5" {
		t.Errorf("dashboard page shows %q messages of %s", v, a)
	}
}

func TestDashboardBounded(t *testing.T) {
	var d dashboard
	t0 := time.Unix(1_000_000, 0)
	for i := range 2 * dashTPSMax {
		d.addTPS(t0.Add(time.Duration(i)*dashTPSEvery), []brokerRow{{Name: "b", PutTPS: float64(i)}})
		d.addTPS(t0.Add(time.Duration(i)*dashTPSEvery+time.Second), []brokerRow{{Name: "b"}}) // too soon: dropped
	}
	if len(d.tps) != dashTPSMax || d.tps[len(d.tps)-1].brokers["b"][0] != float64(2*dashTPSMax-1) {
		t.Fatalf("%d TPS points, last %v", len(d.tps), d.tps[len(d.tps)-1])
	}
	for i := range 200 {
		if !d.snapshotDue(t0.Add(time.Duration(i)*time.Minute), time.Minute) {
			t.Fatalf("snapshot %d not due", i)
		}
		if d.snapshotDue(t0.Add(time.Duration(i)*time.Minute), time.Minute) {
			t.Fatal("a second snapshot claimed while one is being taken")
		}
		d.addSnap(&topicSnap{at: t0.Add(time.Duration(i) * time.Minute), totals: map[string]int64{"T": int64(i * 10), fmt.Sprint("N", i): 1}})
	}
	if len(d.snaps) > dashSnapsMax {
		t.Fatalf("%d snapshots kept", len(d.snaps))
	}
	top, span := d.top(dashTop)
	if span != time.Hour || len(top) == 0 || top[0] != (bar{"T", 600}) {
		t.Fatalf("top %v over %v, want T with 600 over an hour", top, span)
	}
}
