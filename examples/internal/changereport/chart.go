package changereport

import (
	"math"
	"strconv"
	"strings"
)

// The chart's geometry, in SVG user units (the page scales it to its
// width), and the two colours the screenshot test looks for: no other
// element of the page has them.
const (
	chartW, chartH             = 1100, 240
	plotL, plotR, plotT, plotB = 72, 1084, 10, 194
	// chartStroke is the lag line's colour.
	chartStroke = "#e8590c"
	// partitionsHeader is the background of the per-partition table's header.
	partitionsHeader = "#0b7285"
)

// chart is the lag line drawn as inline SVG: no script, no font or file
// to load.
type chart struct {
	Empty      bool
	W, H       int
	L, R, T, B int
	// PlotW and PlotH are the plot area's size; LabelX the right edge of
	// the y labels, LabelY the baseline of the x labels, TickY the end of
	// the x ticks, MidX and MidY the middle of the plot area.
	PlotW, PlotH, LabelX, LabelY, TickY, MidX, MidY int
	Points                                          string
	Dots                                            []point
	XTicks, YTicks                                  []tick
	XTitle                                          string
}

// point is a sample's dot, Title what hovering it shows.
type point struct{ X, Y, Title string }

type tick struct {
	At    string // the x or y coordinate
	Label string
}

func newChart(lag []lagPoint, timed bool) chart {
	c := chart{W: chartW, H: chartH, L: plotL, R: plotR, T: plotT, B: plotB, XTitle: "sample",
		PlotW: plotR - plotL, PlotH: plotB - plotT, LabelX: plotL - 8, LabelY: plotB + 20, TickY: plotB + 5,
		MidX: (plotL + plotR) / 2, MidY: (plotT + plotB) / 2}
	if timed {
		c.XTitle = "seconds since the first sample"
	}
	if len(lag) == 0 {
		c.Empty = true
		return c
	}
	var peak int64
	for _, l := range lag {
		peak = max(peak, l.Total)
	}
	yStep := niceStep(float64(peak) / 4)
	yMax := math.Max(yStep, math.Ceil(float64(peak)/yStep)*yStep)
	xEnd := lag[len(lag)-1].Seconds
	xStep := niceStep(xEnd / 6)
	if !timed {
		xStep = math.Max(1, xStep)
	}
	xMax := math.Max(xStep, math.Ceil(xEnd/xStep)*xStep)
	x := func(v float64) float64 { return plotL + v/xMax*(plotR-plotL) }
	y := func(v float64) float64 { return plotB - v/yMax*(plotB-plotT) }
	var pts []string
	for _, l := range lag {
		p := point{X: num(x(l.Seconds)), Y: num(y(float64(l.Total))), Title: strconv.FormatInt(l.Total, 10) + " records behind"}
		if l.At != "" {
			p.Title += " at " + l.At
		}
		pts = append(pts, p.X+","+p.Y)
		c.Dots = append(c.Dots, p)
	}
	c.Points = strings.Join(pts, " ")
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		c.YTicks = append(c.YTicks, tick{At: num(y(v)), Label: label(v)})
	}
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		c.XTicks = append(c.XTicks, tick{At: num(x(v)), Label: label(v)})
	}
	return c
}

// niceStep returns the step of 1, 2 or 5 times a power of ten at or above
// v (1 for v <= 0).
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// num writes a coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// label writes a tick's value: an integer, or one decimal below 10.
func label(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
