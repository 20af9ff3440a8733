package peer

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The plot is the one figure of the benchmark no one reads as text: a file that does not open, or lacks
// a side, would only be noticed in the repository.
func TestDrawGrowth(t *testing.T) {
	names := []string{"CRD on kube-apiserver", "hcp-apiserver"}
	var results [][]result
	for side := range names {
		var rounds []result
		for _, n := range []int{1000, 10000, 100000} {
			rounds = append(rounds, result{objects: n, created: n, creates: time.Duration(n/(500+100*side)) * time.Second,
				list: time.Duration(n) * 70 * time.Microsecond, rss: int64(n) * (40 - 10*int64(side)) << 10})
		}
		results = append(results, rounds)
	}
	dir := t.TempDir()

	pngPath := filepath.Join(dir, "growth.png")
	if err := drawGrowth(pngPath, names, results); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is no PNG: %v", pngPath, err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 200 {
		t.Errorf("the PNG is %dx%d pixels, too small for three panels", b.Dx(), b.Dy())
	}

	svgPath := filepath.Join(dir, "growth.svg")
	if err := drawGrowth(svgPath, names, results); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"<svg", "creates/s", "raw list of all objects", "RSS of server and etcd", "100000"}, names...) {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("the SVG has no %q", want)
		}
	}

	if err := drawGrowth(filepath.Join(dir, "growth.txt"), names, results); err == nil {
		t.Error("drawing into a .txt file succeeded; want an error naming the format")
	}
}
