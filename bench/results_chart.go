package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"time"
)

// The chart's geometry: two panels stacked, throughput on top and p99
// below, one group of two bars (ours, kfake) per workload, the workload
// names under the lower panel (the panels share their x axis). Text is
// results_font.go's 5x7 font at chartText times: 14 px high, so a label
// turned upright fits in a bar.
const (
	chartText   = 2  // font scale
	chartPad    = 12 // outer margin
	chartGap    = 24 // between the title, the panels and the names
	chartGroupW = 64
	chartBarW   = 24
	chartPanelH = 200
	chartSwatch = 14 // side of a legend's colour square
)

type chartColor struct {
	name string
	c    color.RGBA
}

var (
	colorOurs = chartColor{"blue", color.RGBA{0x1f, 0x77, 0xb4, 0xff}}
	colorPeer = chartColor{"orange", color.RGBA{0xff, 0x7f, 0x0e, 0xff}}
	colorAxis = color.RGBA{0x30, 0x30, 0x30, 0xff}
	colorGrid = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	colorText = color.RGBA{0x10, 0x10, 0x10, 0xff}
)

// chartScale is the full height of each panel: the largest throughput and
// the largest p99 of either broker.
func (res *Results) chartScale() (float64, time.Duration) {
	var mib float64
	var p99 time.Duration
	for _, r := range res.Rows {
		mib, p99 = max(mib, r.MiBPerSec), max(p99, r.P99)
		if p := r.Peer; p != nil {
			mib = max(mib, p.MiBPerSec)
			if p.Latency != nil && p.Latency.Count > 0 {
				p99 = max(p99, p.Latency.P99)
			}
		}
	}
	return mib, p99
}

// chartBar is one bar's figure; ok is false where there is none (no peer,
// no latency).
type chartBar struct {
	v     float64
	label string
	ok    bool
}

// chartPanelData is what one panel shows: per row, ours then kfake's.
type chartPanelData struct {
	title string
	max   float64
	tick  func(v float64) string // the label of a grid line at v
	bars  [][2]chartBar
}

func (res *Results) chartPanels() [2]chartPanelData {
	maxMiB, maxP99 := res.chartScale()
	tput := chartPanelData{title: "Throughput, MiB/s (higher is better)", max: maxMiB, tick: fmtMiB}
	lat := chartPanelData{title: "p99 latency (lower is better)", max: float64(maxP99),
		tick: func(v float64) string { return fmtDur(time.Duration(v)) }}
	mibBar := func(v float64) chartBar { return chartBar{v, fmtMiB(v), v > 0} }
	latBar := func(l *Latency) chartBar {
		if l == nil || l.Count == 0 || l.P99 <= 0 {
			return chartBar{}
		}
		return chartBar{float64(l.P99), fmtDur(l.P99), true}
	}
	for _, r := range res.Rows {
		t := [2]chartBar{mibBar(r.MiBPerSec)}
		l := [2]chartBar{}
		if r.P99 > 0 {
			l[0] = chartBar{float64(r.P99), fmtDur(r.P99), true}
		}
		if p := r.Peer; p != nil {
			t[1], l[1] = mibBar(p.MiBPerSec), latBar(p.Latency)
		}
		tput.bars, lat.bars = append(tput.bars, t), append(lat.bars, l)
	}
	return [2]chartPanelData{tput, lat}
}

// fmtMiB prints a throughput with 3 significant digits, as fmtDur does a
// latency, so a label stays short enough to stand above a bar.
func fmtMiB(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// chartRect is a filled rectangle: a bar, a grid line, a legend swatch.
type chartRect struct {
	r image.Rectangle
	c color.RGBA
}

// chartLabel is one text; up draws it turned upright (drawTextUp), with
// (x, y) its bottom-left corner, else (x, y) is its top-left corner.
type chartLabel struct {
	text string
	x, y int
	up   bool
}

// bounds is the rectangle the label's pixels fall in.
func (l chartLabel) bounds() image.Rectangle {
	w, h := textWidth(l.text, chartText), textHeight(chartText)
	if l.up {
		return image.Rect(l.x, l.y-w+1, l.x+h, l.y+1)
	}
	return image.Rect(l.x, l.y, l.x+w, l.y+h)
}

// chartLayout is everything the chart draws, placed: WriteChart only
// paints it, and tests read it.
type chartLayout struct {
	w, h   int
	tops   [2]int // each panel's full-height line; its axis is chartPanelH below
	plotX  int    // the y axis; the first group starts here
	rects  []chartRect
	labels []chartLabel
}

// layoutChart places the title, then per panel a header (the axis label
// and the legend), room for the upright values above the tallest bar, the
// plot with its grid labelled at each quarter, and under the lower panel
// the upright workload names.
func (res *Results) layoutChart() *chartLayout {
	panels := res.chartPanels()
	th := textHeight(chartText)
	l := &chartLayout{}

	// The tick labels sit left of the y axis, right-aligned.
	tickW := 0
	for _, p := range panels {
		for q := 1; q <= 4; q++ {
			tickW = max(tickW, textWidth(p.tick(p.max*float64(q)/4), chartText))
		}
	}
	l.plotX = chartPad + tickW + 8
	groupsW := max(len(res.Rows), 1) * chartGroupW

	title := "Benchmark results: ours vs kfake"
	if res.Commit != "" {
		title += " at " + res.Commit
	}
	l.labels = append(l.labels, chartLabel{text: title, x: chartPad, y: chartPad})
	l.w = max(l.plotX+groupsW+chartPad, 2*chartPad+textWidth(title, chartText))
	y := chartPad + th + chartGap

	for i, p := range panels {
		x := l.plotX
		l.labels = append(l.labels, chartLabel{text: p.title, x: x, y: y})
		x += textWidth(p.title, chartText) + chartGap
		for _, k := range []struct {
			name string
			c    color.RGBA
		}{{"ours", colorOurs.c}, {"kfake", colorPeer.c}} {
			l.rects = append(l.rects, chartRect{image.Rect(x, y, x+chartSwatch, y+chartSwatch), k.c})
			x += chartSwatch + 6
			l.labels = append(l.labels, chartLabel{text: k.name, x: x, y: y})
			x += textWidth(k.name, chartText) + 12
		}
		l.w = max(l.w, x-12+chartPad)
		y += th

		valueH := 0
		for _, b := range p.bars {
			for _, v := range b {
				if v.ok {
					valueH = max(valueH, textWidth(v.label, chartText))
				}
			}
		}
		top := y + valueH + 8
		l.tops[i] = top
		axis := top + chartPanelH
		for q := 1; q <= 4; q++ {
			gy := axis - q*chartPanelH/4
			l.rects = append(l.rects, chartRect{image.Rect(l.plotX, gy, l.plotX+groupsW, gy+1), colorGrid})
			t := p.tick(p.max * float64(q) / 4)
			l.labels = append(l.labels, chartLabel{text: t, x: l.plotX - 6 - textWidth(t, chartText), y: gy - th/2})
		}
		l.rects = append(l.rects,
			chartRect{image.Rect(l.plotX, axis, l.plotX+groupsW, axis+1), colorAxis},
			chartRect{image.Rect(l.plotX-1, top, l.plotX, axis+1), colorAxis})
		for j, b := range p.bars {
			x := l.plotX + j*chartGroupW + (chartGroupW-2*chartBarW)/2
			for k, v := range b {
				r, ok := barRect(x+k*chartBarW, top, v.v/p.max)
				if !ok || !v.ok {
					continue
				}
				l.rects = append(l.rects, chartRect{r, [2]color.RGBA{colorOurs.c, colorPeer.c}[k]})
				l.labels = append(l.labels, chartLabel{text: v.label, x: r.Min.X + (r.Dx()-th)/2, y: r.Min.Y - 4, up: true})
			}
		}
		y = axis + chartGap
	}

	// The names hang from the lower axis, reading upwards.
	namesTop := l.tops[1] + chartPanelH + 8
	namesH := 0
	for j, r := range res.Rows {
		w := textWidth(r.Workload, chartText)
		namesH = max(namesH, w)
		cx := l.plotX + j*chartGroupW + chartGroupW/2
		l.labels = append(l.labels, chartLabel{text: r.Workload, x: cx - th/2, y: namesTop + w - 1, up: true})
	}
	l.h = namesTop + namesH + chartPad
	return l
}

// barRect is a bar of height frac of the panel whose full-height line is
// top. NaN (0/0) and non-positive fractions have none.
func barRect(x, top int, frac float64) (image.Rectangle, bool) {
	if !(frac > 0) {
		return image.Rectangle{}, false
	}
	h := max(1, int(min(frac, 1)*chartPanelH+0.5))
	// One pixel short of the bar's width: a gap between ours and kfake's.
	return image.Rect(x, top+chartPanelH-h, x+chartBarW-1, top+chartPanelH), true
}

// ChartSize is the size of the chart WriteChart draws.
func (res *Results) ChartSize() (w, h int) {
	l := res.layoutChart()
	return l.w, l.h
}

// WriteChart draws the rows as a PNG bar chart.
func (res *Results) WriteChart(w io.Writer) error {
	l := res.layoutChart()
	img := image.NewRGBA(image.Rect(0, 0, l.w, l.h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	for _, r := range l.rects {
		draw.Draw(img, r.r, image.NewUniform(r.c), image.Point{}, draw.Src)
	}
	for _, t := range l.labels {
		if t.up {
			drawTextUp(img, t.x, t.y, t.text, chartText, colorText)
		} else {
			drawText(img, t.x, t.y, t.text, chartText, colorText)
		}
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("bench report: chart: %w", err)
	}
	return nil
}
