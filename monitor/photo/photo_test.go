package photo

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testJPEG is a small JPEG as image/jpeg writes it (no metadata).
func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckReadsEXIF(t *testing.T) {
	sp := time.FixedZone("", -3*3600)
	taken := time.Date(2026, 11, 27, 21, 14, 5, 0, sp)
	lat, lon := -20.8367123, -40.7292456
	b, err := WithEXIF(testJPEG(t, 64, 48), taken, &lat, &lon)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Check(b)
	if err != nil {
		t.Fatal(err)
	}
	if info.ContentType != JPEG || info.Width != 64 || info.Height != 48 || info.Size != len(b) || !ValidSHA256(info.SHA256) {
		t.Fatalf("info %+v", info)
	}
	x := info.EXIF
	if x == nil || x.TakenAt != "2026-11-27T21:14:05-03:00" || !x.ZoneStated || x.Lat == nil ||
		*x.Lat-lat > 1e-6 || lat-*x.Lat > 1e-6 || *x.Lon-lon > 1e-6 || lon-*x.Lon > 1e-6 {
		t.Fatalf("exif %+v (lat %v lon %v)", x, deref(x.Lat), deref(x.Lon))
	}

	// Without metadata: a photo all the same, stating nothing.
	plain, err := Check(testJPEG(t, 8, 8))
	if err != nil || plain.EXIF != nil {
		t.Fatalf("plain JPEG: %+v %v", plain, err)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -999
	}
	return *p
}

func TestCheckRefuses(t *testing.T) {
	var pngBuf bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 3, 3))
	img.Set(1, 1, color.White)
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	if info, err := Check(pngBuf.Bytes()); err != nil || info.ContentType != PNG {
		t.Fatalf("PNG: %+v %v", info, err)
	}
	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	html := []byte("<html><script>alert(1)</script></html>")
	truncated := testJPEG(t, 16, 16)[:20]
	// A PNG header claiming 100 000 × 100 000 pixels: refused before anything decodes it.
	huge := append([]byte(nil), pngBuf.Bytes()...)
	copy(huge[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	for name, b := range map[string][]byte{"empty": nil, "gif": gif, "html": html, "truncated jpeg": truncated,
		"huge png": huge, "too large": append(testJPEG(t, 8, 8), make([]byte, MaxBytes)...)} {
		if _, err := Check(b); !errors.Is(err, ErrNotPhoto) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A time without OffsetTimeOriginal stays a wall time without a zone.
func TestParseWithoutZone(t *testing.T) {
	got, zoned := takenAt("2026:11:27 21:14:05", "")
	if got != "2026-11-27T21:14:05" || zoned {
		t.Fatalf("%q %v", got, zoned)
	}
	if got, _ := takenAt("0000:00:00 00:00:00", ""); got != "" {
		t.Fatalf("zero date: %q", got)
	}
}

func FuzzParse(f *testing.F) {
	lat, lon := -20.83, -40.72
	b, err := WithEXIF(testJPEG(f, 4, 4), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), &lat, &lon)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:400])
	f.Add(b)
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x08eXIfMM\x00*\x00\x00\x00\x08\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := Parse(b)
		if err != nil {
			return
		}
		if x.Lat != nil && (*x.Lat < -90 || *x.Lat > 90 || *x.Lon < -180 || *x.Lon > 180) {
			t.Fatalf("position out of range: %v %v", *x.Lat, *x.Lon)
		}
		if x.TakenAt != "" {
			layout := "2006-01-02T15:04:05"
			if x.ZoneStated {
				layout = time.RFC3339
			}
			if _, err := time.Parse(layout, x.TakenAt); err != nil {
				t.Fatalf("taken_at %q: %v", x.TakenAt, err)
			}
		}
	})
}

// The corpus directory exists and holds the seeds worth keeping.
func TestFuzzCorpusKept(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzParse"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("testdata/fuzz/FuzzParse: %v (%d entries)", err, len(entries))
	}
}
