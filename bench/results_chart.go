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
// below, one group of two bars (ours, kfake) per workload.
const (
	chartMargin = 20
	chartGroupW = 40
	chartBarW   = 14
	chartPanelH = 200
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
)

// ChartSize is the size of the chart of n workloads.
func ChartSize(n int) (w, h int) {
	return 2*chartMargin + max(n, 1)*chartGroupW, 3*chartMargin + 2*chartPanelH
}

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

// WriteChart draws the rows as a PNG bar chart. It draws no text: the
// standard library has no font, and RESULTS.md gives the legend and scale.
func (res *Results) WriteChart(w io.Writer) error {
	width, height := ChartSize(len(res.Rows))
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	maxMiB, maxP99 := res.chartScale()
	top := chartMargin
	bottom := 2*chartMargin + chartPanelH
	for _, y0 := range []int{top, bottom} {
		// Quarter lines, then the axis.
		for q := 1; q <= 4; q++ {
			fill(img, chartMargin, y0+chartPanelH-q*chartPanelH/4, width-chartMargin, y0+chartPanelH-q*chartPanelH/4+1, colorGrid)
		}
		fill(img, chartMargin, y0+chartPanelH, width-chartMargin, y0+chartPanelH+1, colorAxis)
	}
	for i, r := range res.Rows {
		x := chartMargin + i*chartGroupW + (chartGroupW-2*chartBarW)/2
		bar(img, x, top, r.MiBPerSec/maxMiB, colorOurs.c)
		bar(img, x, bottom, float64(r.P99)/float64(maxP99), colorOurs.c)
		if p := r.Peer; p != nil {
			bar(img, x+chartBarW, top, p.MiBPerSec/maxMiB, colorPeer.c)
			if p.Latency != nil && p.Latency.Count > 0 {
				bar(img, x+chartBarW, bottom, float64(p.Latency.P99)/float64(maxP99), colorPeer.c)
			}
		}
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("bench report: chart: %w", err)
	}
	return nil
}

// bar draws a bar of height frac of a panel whose top is y0. NaN (0/0)
// and non-positive fractions draw nothing.
func bar(img *image.RGBA, x, y0 int, frac float64, c color.RGBA) {
	if !(frac > 0) {
		return
	}
	h := max(1, int(min(frac, 1)*chartPanelH+0.5))
	fill(img, x, y0+chartPanelH-h, x+chartBarW-1, y0+chartPanelH, c)
}

func fill(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{}, draw.Src)
}
