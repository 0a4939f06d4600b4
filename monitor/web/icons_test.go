package web

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var updateIcons = flag.Bool("update-icons", false, "write the generated app icons into static/icons")

// The app icons of the manifest are drawn here, not in an editor: a train car in white on the
// dashboard's blue. "any" icons are a rounded square; maskable ones fill the square and keep the
// drawing inside the central 60 % (the safe zone is the central circle of 80 %). The committed
// PNGs must be what this draws (go test ./monitor/web -run TestAppIcons -update-icons rewrites
// them).
func TestAppIcons(t *testing.T) {
	for _, ic := range []struct {
		name     string
		size     int
		maskable bool
	}{{"icon-192.png", 192, false}, {"icon-512.png", 512, false}, {"maskable-192.png", 192, true}, {"maskable-512.png", 512, true}} {
		var b bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, drawIcon(ic.size, ic.maskable)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("static", "icons", ic.name)
		if *updateIcons {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := fs.ReadFile(files, "static/icons/"+ic.name)
		if *updateIcons { // the embedded copy is the one compiled before the update
			got, err = b.Bytes(), nil
		}
		if err != nil || !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s is not what drawIcon draws (%v): go test ./monitor/web -run TestAppIcons -update-icons", ic.name, err)
			continue
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(got))
		if err != nil || cfg.Width != ic.size || cfg.Height != ic.size {
			t.Errorf("%s: %+v %v", ic.name, cfg, err)
		}
		// A maskable icon is opaque to its corners; an "any" icon's corners are transparent.
		img, _ := png.Decode(bytes.NewReader(got))
		if _, _, _, a := img.At(0, 0).RGBA(); (a == 0xffff) != ic.maskable {
			t.Errorf("%s: corner alpha %d", ic.name, a)
		}
	}
}

// drawIcon draws the icon at size×size, antialiased by 4×4 supersampling.
func drawIcon(size int, maskable bool) image.Image {
	blue := color.NRGBA{0x1f, 0x4e, 0x79, 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	// Shapes in a unit square; scale is the drawing's share of the icon.
	scale := 0.78
	if maskable {
		scale = 0.60
	}
	at := func(x, y float64) (float64, float64) { return (x-0.5)/scale + 0.5, (y-0.5)/scale + 0.5 }
	roundRect := func(x, y, x0, y0, x1, y1, r float64) bool {
		if x < x0 || x > x1 || y < y0 || y > y1 {
			return false
		}
		cx, cy := math.Max(x0+r, math.Min(x, x1-r)), math.Max(y0+r, math.Min(y, y1-r))
		return math.Hypot(x-cx, y-cy) <= r
	}
	circle := func(x, y, cx, cy, r float64) bool { return math.Hypot(x-cx, y-cy) <= r }
	shade := func(u, v float64) color.NRGBA {
		if !maskable && !roundRect(u, v, 0, 0, 1, 1, 0.2) {
			return color.NRGBA{}
		}
		x, y := at(u, v)
		switch {
		case circle(x, y, 0.3, 0.78, 0.08), circle(x, y, 0.7, 0.78, 0.08): // wheels
			if circle(x, y, 0.3, 0.78, 0.035) || circle(x, y, 0.7, 0.78, 0.035) {
				return blue
			}
			return white
		case roundRect(x, y, 0.24, 0.32, 0.38, 0.46, 0.02), roundRect(x, y, 0.43, 0.32, 0.57, 0.46, 0.02), roundRect(x, y, 0.62, 0.32, 0.76, 0.46, 0.02): // windows
			return blue
		case roundRect(x, y, 0.12, 0.22, 0.88, 0.72, 0.08): // the car
			return white
		case roundRect(x, y, 0.2, 0.12, 0.8, 0.2, 0.03): // the roof
			return white
		}
		return blue
	}
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const n = 4
	for py := range size {
		for px := range size {
			var r, g, b, a float64
			for sy := range n {
				for sx := range n {
					c := shade((float64(px)+(float64(sx)+0.5)/n)/float64(size), (float64(py)+(float64(sy)+0.5)/n)/float64(size))
					fa := float64(c.A) / 255
					r += float64(c.R) * fa
					g += float64(c.G) * fa
					b += float64(c.B) * fa
					a += fa
				}
			}
			if a == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{uint8(math.Round(r / a)), uint8(math.Round(g / a)), uint8(math.Round(b / a)), uint8(math.Round(a / (n * n) * 255))})
		}
	}
	return img
}
