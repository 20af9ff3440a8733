package peer

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// sideColors tell the sides apart in every panel: the peer grey, hcp-apiserver blue.
var sideColors = []color.Color{color.RGBA{R: 120, G: 120, B: 120, A: 255}, color.RGBA{R: 30, G: 90, B: 200, A: 255}}

// drawGrowth draws, against the number of objects held, each side's creates/s, raw list latency and RSS:
// three panels side by side in one file. gonum/plot draws it, so the benchmark needs no other tool.
func drawGrowth(path string, names []string, results [][]result) error {
	panels := []struct {
		title, unit string
		value       func(result) float64
		logY        bool // for what grows with the objects: the slope shows how
	}{
		{"creates/s", "creates per second", result.createsPerSecond, false},
		{"raw list of all objects", "seconds (mean)", func(r result) float64 { return r.list.Seconds() }, true},
		{"RSS of server and etcd", "MiB", func(r result) float64 { return float64(r.rss) / (1 << 20) }, true},
	}
	row := make([]*plot.Plot, len(panels))
	for j, panel := range panels {
		p := plot.New()
		p.Title.Text = panel.title
		p.X.Label.Text = "HCPClusters held"
		p.Y.Label.Text = panel.unit
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		if panel.logY {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		} else {
			p.Y.Min = 0
		}
		// Bottom right: where the lines of growing figures are not, and below the creates/s lines.
		p.Legend.Top, p.Legend.Left = false, false
		p.Legend.XOffs, p.Legend.YOffs = -3*vg.Millimeter, 3*vg.Millimeter
		for i, name := range names {
			xys := make(plotter.XYs, len(results[i]))
			for k, r := range results[i] {
				xys[k] = plotter.XY{X: float64(r.objects), Y: panel.value(r)}
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return fmt.Errorf("%s of %s: %w", panel.title, name, err)
			}
			line.Color, points.Color = sideColors[i%len(sideColors)], sideColors[i%len(sideColors)]
			p.Add(line, points)
			p.Legend.Add(name, line, points)
		}
		row[j] = p
	}

	// The file's extension picks the format: .svg, .png, .pdf and the others gonum/plot writes.
	canvas, err := draw.NewFormattedCanvas(36*vg.Centimeter, 11*vg.Centimeter, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Centimeter, PadTop: 3 * vg.Millimeter, PadBottom: 3 * vg.Millimeter,
		PadLeft: 3 * vg.Millimeter, PadRight: 3 * vg.Millimeter}
	plots := [][]*plot.Plot{row}
	for j, c := range plot.Align(plots, tiles, draw.New(canvas))[0] {
		row[j].Draw(c)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
