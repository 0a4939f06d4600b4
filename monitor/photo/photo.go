// Package photo checks the photographs an agent attaches to a field verification (constatação
// em campo) and reads what their EXIF metadata states: the capture time and position the camera
// wrote into the file.
//
// A photo is identified by the SHA-256 of its bytes. Only JPEG and PNG are accepted, recognised
// by their content (the type a client declares is not trusted), with bounded size and
// dimensions. The EXIF reader is a small bounded parser of its own (the few tags needed:
// DateTimeOriginal, OffsetTimeOriginal, DateTime, the GPS position): every offset is checked
// against the data, every count bounded, no pointer followed twice; it never panics on hostile
// input (FuzzParse). The served EXIF libraries were not worth a dependency for four tags:
// github.com/rwcarlsen/goexif has no tagged release (pseudo-versions only, last changed in 2019),
// and github.com/dsoprea/go-exif/v3 brings several modules of its own and reports errors by
// panicking internally.
//
// What EXIF says is what the phone's camera stated, not a fact the monitor observed: a phone's
// clock and position can be wrong or set by its owner. The monitor keeps it as the file's
// statement, beside the time the server received the file.
package photo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // image.DecodeConfig of JPEG
	_ "image/png"  // and of PNG
	"net/http"
)

// Bounds of an accepted photo.
const (
	// MaxBytes bounds a photo's size: a phone's 12-megapixel JPEG is 2–6 MiB.
	MaxBytes = 12 << 20
	// MaxPixels bounds its dimensions (width × height).
	MaxPixels = 64_000_000
)

// Content types accepted.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
)

// ErrNotPhoto is the error of content that is not a JPEG or PNG image within the bounds.
var ErrNotPhoto = errors.New("photo: not a JPEG or PNG image within the bounds")

// Info is what the monitor knows of a photo from its bytes.
type Info struct {
	SHA256      string `json:"sha256"` // hex, lower case
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	// EXIF is what the file's metadata states; nil when it states neither a time nor a position.
	EXIF *EXIF `json:"exif,omitempty"`
}

// Check identifies b: JPEG or PNG by content (http.DetectContentType), within MaxBytes and
// MaxPixels, with a header image.DecodeConfig reads. Its EXIF statements are read when present;
// malformed metadata is ignored (the image itself is still a photo).
func Check(b []byte) (*Info, error) {
	if len(b) == 0 || len(b) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrNotPhoto, len(b), MaxBytes)
	}
	ct := http.DetectContentType(b)
	if ct != JPEG && ct != PNG {
		return nil, fmt.Errorf("%w: content is %s", ErrNotPhoto, ct)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPhoto, err)
	}
	if "image/"+format != ct {
		return nil, fmt.Errorf("%w: content %s decodes as %s", ErrNotPhoto, ct, format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, fmt.Errorf("%w: %d×%d pixels", ErrNotPhoto, cfg.Width, cfg.Height)
	}
	sum := sha256.Sum256(b)
	info := &Info{SHA256: hex.EncodeToString(sum[:]), ContentType: ct, Size: len(b), Width: cfg.Width, Height: cfg.Height}
	if x, err := Parse(b); err == nil && !x.empty() {
		info.EXIF = x
	}
	return info, nil
}

// ValidSHA256 reports whether s is a SHA-256 as Info names it: 64 lower-case hex digits.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
