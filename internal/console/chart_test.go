package console

import (
	"encoding/xml"
	"regexp"
	"strings"
	"testing"
	"time"
)

// texts returns the text of every <text class="class"> of an SVG, after
// checking that it is well-formed XML.
func texts(t *testing.T, svg, class string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("chart is not well-formed: %v\n%s", err, svg)
			}
			break
		}
	}
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*class="`+class+`"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestLineChart(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 14, 30, 0, 0, time.Local)
	var put, get chartSeries
	put.Name, get.Name = "Put TPS", "Get <TPS>"
	for i := range 61 {
		ms := float64(t0.Add(time.Duration(i) * 5 * time.Second).UnixMilli())
		put.Points = append(put.Points, [2]float64{ms, float64(i)})
		get.Points = append(get.Points, [2]float64{ms, 3.5})
	}
	svg := string(lineChart("TPS", []chartSeries{put, get}))
	ys := texts(t, svg, "y-label")
	if len(ys) < 4 || ys[0] != "0" || ys[len(ys)-1] != "80" {
		t.Errorf("value axis %v, want 0 up to 80 in steps of 20 for a maximum of 60", ys)
	}
	xs := texts(t, svg, "x-label")
	if len(xs) < 3 || xs[0] != "14:30" || xs[1] != "14:31" {
		t.Errorf("time axis %v, want 14:30, 14:31, ...", xs)
	}
	if !strings.Contains(svg, ">Put TPS 60<") || !strings.Contains(svg, ">Get &lt;TPS&gt; 3.50<") {
		t.Errorf("legend without the series' names and last values (escaped): %s", svg)
	}
	if strings.Count(svg, "<polyline") != 2 {
		t.Errorf("want 2 lines: %s", svg)
	}
	// Short spans label seconds.
	short := chartSeries{Name: "Lag", Points: [][2]float64{{float64(t0.UnixMilli()), 1}, {float64(t0.Add(20 * time.Second).UnixMilli()), 2}}}
	if xs := texts(t, string(lineChart("Lag", []chartSeries{short})), "x-label"); len(xs) < 2 || xs[0] != "14:30:00" {
		t.Errorf("20 s of time labelled %v", xs)
	}
	if e := texts(t, string(lineChart("Lag", []chartSeries{{Name: "Lag"}})), "empty"); len(e) != 1 {
		t.Errorf("empty chart says %v", e)
	}
}

func TestBarChart(t *testing.T) {
	svg := string(barChart("Top topics", []bar{{"A", 100}, {"B&C", 40}}))
	if v := texts(t, svg, "value"); len(v) != 2 || v[0] != "100" || v[1] != "40" {
		t.Errorf("bar values %v", v)
	}
	if !strings.Contains(svg, `data-name="B&amp;C"`) {
		t.Errorf("bar name not escaped: %s", svg)
	}
	if e := texts(t, string(barChart("x", nil)), "empty"); len(e) != 1 {
		t.Errorf("empty bar chart says %v", e)
	}
}

func TestNiceStep(t *testing.T) {
	for in, want := range map[float64]float64{0: 0.25, 0.1: 0.25, 0.9: 1, 1.5: 2, 2.2: 2.5, 3: 5, 15: 20, 4000: 5000} {
		if got := niceStep(in); got != want {
			t.Errorf("niceStep(%v) = %v, want %v", in, got, want)
		}
	}
}
