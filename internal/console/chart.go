package console

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// The console draws every chart here, as SVG on the server: the pages
// embed it and the live pages replace it with the one their JSON carries,
// so there is one drawing code and no script library.

// chartSeries is one line of a chart: [unix ms, value] points, oldest
// first.
type chartSeries struct {
	Name   string
	Points [][2]float64
}

// chartColors are the series' colors in order.
var chartColors = [...]string{"#2471a3", "#239b56", "#c0392b", "#d68910", "#7d3c98", "#17a589"}

const (
	chartW, chartH                = 800, 220
	padL, padR, padTop, padBottom = 60, 16, 30, 30
)

// lineChart renders series over time with a value axis, time labels and
// a legend naming each series and its last value. label names the chart
// for screen readers; empty series draw "no data yet".
func lineChart(label string, series []chartSeries) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		template.HTMLEscapeString(label), chartW, chartH, chartW, chartH)
	t0, t1, vmax := math.Inf(1), math.Inf(-1), 0.0
	n := 0
	for _, s := range series {
		for _, p := range s.Points {
			t0, t1, vmax = math.Min(t0, p[0]), math.Max(t1, p[0]), math.Max(vmax, p[1])
			n++
		}
	}
	x0, x1, y0, y1 := float64(padL), float64(chartW-padR), float64(chartH-padBottom), float64(padTop)
	// Value axis: 0 to a round top with 4 steps.
	step := niceStep(vmax / 4)
	top := step * 4
	if vmax > top {
		top = step * 5
	}
	yOf := func(v float64) float64 { return y0 - v/top*(y0-y1) }
	b.WriteString(`<g class="axis" font-size="11" fill="#555">`)
	for v := 0.0; v <= top+step/2; v += step {
		y := yOf(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`, padL, y, chartW-padR, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" class="y-label">%s</text>`, padL-6, y+4, fmtValue(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%d" y2="%.0f" stroke="#888"/>`, padL, y0, chartW-padR, y0)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.0f" x2="%d" y2="%.0f" stroke="#888"/>`, padL, y0, padL, y1)
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" class="empty">no data yet</text></g></svg>`, chartW/2, chartH/2)
		return template.HTML(b.String())
	}
	if !(t1 > t0) {
		t0, t1 = t0-30e3, t1+30e3
	}
	xOf := func(t float64) float64 { return x0 + (t-t0)/(t1-t0)*(x1-x0) }
	// Time axis: ticks at a round interval giving about 6 labels.
	tick := timeStep(time.Duration(t1-t0) * time.Millisecond / 6)
	layout := "15:04"
	if tick < time.Minute {
		layout = "15:04:05"
	}
	tms := float64(tick.Milliseconds())
	for t := math.Ceil(t0/tms) * tms; t <= t1; t += tms {
		x := xOf(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#888"/>`, x, y0, x, y0+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" class="x-label">%s</text>`, x, y0+16, time.UnixMilli(int64(t)).Format(layout))
	}
	b.WriteString(`</g>`)
	lx := float64(padL)
	for i, s := range series {
		color := chartColors[i%len(chartColors)]
		if len(s.Points) > 0 {
			b.WriteString(`<polyline fill="none" stroke-width="1.8" stroke="` + color + `" points="`)
			for j, p := range s.Points {
				if j > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%.1f,%.1f", xOf(p[0]), yOf(p[1]))
			}
			b.WriteString(`"/>`)
			// The newest point as a dot, so that a single point shows too.
			p := s.Points[len(s.Points)-1]
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, xOf(p[0]), yOf(p[1]), color)
		}
		last := "-"
		if len(s.Points) > 0 {
			last = fmtValue(s.Points[len(s.Points)-1][1])
		}
		text := s.Name + " " + last
		fmt.Fprintf(&b, `<g class="legend"><rect x="%.0f" y="8" width="12" height="12" fill="%s"/><text x="%.0f" y="18" font-size="12">%s</text></g>`,
			lx, color, lx+16, template.HTMLEscapeString(text))
		lx += 16 + 7*float64(len([]rune(text))) + 20
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// bar is one bar of a bar chart.
type bar struct {
	Name  string
	Value float64
}

// barChart renders horizontal bars, largest first as given, each with its
// name and value.
func barChart(label string, bars []bar) template.HTML {
	const rowH, nameW, valueW = 24, 260, 80
	h := padTop + rowH*max(len(bars), 1) + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		template.HTMLEscapeString(label), chartW, h, chartW, h)
	fmt.Fprintf(&b, `<text x="0" y="18" font-size="12" class="legend">%s</text>`, template.HTMLEscapeString(label))
	if len(bars) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="11" fill="#555" class="empty">no data yet</text></svg>`, chartW/2, padTop+16)
		return template.HTML(b.String())
	}
	vmax := 0.0
	for _, x := range bars {
		vmax = math.Max(vmax, x.Value)
	}
	if vmax <= 0 {
		vmax = 1
	}
	width := float64(chartW - nameW - valueW)
	for i, x := range bars {
		y := padTop + i*rowH
		name := shorten(x.Name, 36)
		fmt.Fprintf(&b, `<g class="bar" data-name="%s"><text x="%d" y="%d" text-anchor="end" font-size="12">%s</text>`,
			template.HTMLEscapeString(x.Name), nameW-8, y+15, template.HTMLEscapeString(name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, nameW, y+3, math.Max(1, x.Value/vmax*width), rowH-6, chartColors[0])
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12" class="value">%s</text></g>`, float64(nameW)+x.Value/vmax*width+6, y+15, fmtValue(x.Value))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten (at least 0.25
// so that an idle chart still has an axis).
func niceStep(x float64) float64 {
	if x <= 0.25 {
		return 0.25
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if x <= m*p {
			return m * p
		}
	}
	return 10 * p
}

var timeSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
}

func timeStep(d time.Duration) time.Duration {
	for _, s := range timeSteps {
		if d <= s {
			return s
		}
	}
	return time.Hour
}

// fmtValue prints a value without needless decimals.
func fmtValue(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// timelineChart draws trace steps on a time axis: one row per step, a
// bar from its start for its cost (a mark when it has none), colored by
// outcome, labelled with its kind, group and cost.
func timelineChart(steps []traceStep) template.HTML {
	const rowH, labelW = 26, 300
	h := padTop + rowH*max(len(steps), 1) + padBottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart timeline" role="img" aria-label="trace timeline" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		chartW, h, chartW, h)
	if len(steps) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="11" fill="#555" class="empty">no trace records</text></svg>`, chartW/2, padTop+16)
		return template.HTML(b.String())
	}
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range steps {
		t0 = min(t0, s.At)
		t1 = max(t1, s.At+int64(max(s.Cost, 0)))
	}
	span := max(t1-t0, 1)
	x0, x1 := float64(labelW), float64(chartW-padR)
	xOf := func(t int64) float64 { return x0 + float64(t-t0)/float64(span)*(x1-x0) }
	// The axis: offsets from the first step in ms.
	tick := niceStep(float64(span) / 5)
	y0 := h - padBottom
	b.WriteString(`<g class="axis" font-size="11" fill="#555">`)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="#888"/>`, x0, y0, x1, y0)
	for v := 0.0; v <= float64(span)+tick/2; v += tick {
		x := x0 + v/float64(span)*(x1-x0)
		if x > x1+0.5 {
			break
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`, x, padTop, x, y0+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" class="x-label">+%s ms</text>`, x, y0+16, fmtValue(v))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="18" class="x-label">%s</text></g>`, x0, time.UnixMilli(t0).Format("2006-01-02 15:04:05.000"))
	for i, s := range steps {
		y := padTop + i*rowH
		color := "#239b56"
		switch s.Status {
		case "success", "COMMIT_MESSAGE":
		case "consuming", "UNKNOW":
			color = "#d68910"
		default:
			color = "#c0392b"
		}
		label := s.Kind + " " + shorten(s.Group, 24)
		if s.HasCost {
			label += " · " + strconv.Itoa(s.Cost) + " ms"
		}
		fmt.Fprintf(&b, `<g class="step" data-kind="%s"><text x="%d" y="%d" text-anchor="end" font-size="12">%s</text>`,
			s.Kind, labelW-8, y+16, template.HTMLEscapeString(label))
		w := 3.0
		if s.HasCost {
			w = max(3, float64(s.Cost)/float64(span)*(x1-x0))
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect></g>`,
			xOf(s.At), y+5, w, rowH-10, color, template.HTMLEscapeString(s.Status))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
