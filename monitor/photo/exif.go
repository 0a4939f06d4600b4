package photo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// EXIF is what a photo's metadata states of its capture. Every field is the camera's statement.
type EXIF struct {
	// TakenAt is DateTimeOriginal: RFC 3339 with its offset when the file states one
	// (OffsetTimeOriginal), else the camera's local wall time without a zone
	// ("2006-01-02T15:04:05"), since the file does not say which zone it is in.
	TakenAt    string `json:"taken_at,omitempty"`
	ZoneStated bool   `json:"zone_stated,omitempty"`
	// Lat and Lon are the GPS position, WGS 84 degrees; nil when not stated.
	Lat *float64 `json:"lat,omitempty"`
	Lon *float64 `json:"lon,omitempty"`
}

func (x *EXIF) empty() bool { return x.TakenAt == "" && x.Lat == nil }

// Parse reads the EXIF statements of a JPEG (its APP1 "Exif" segment) or a PNG (its eXIf
// chunk). It reads at most what the data holds, follows each IFD pointer once, and bounds
// every count.
func Parse(b []byte) (*EXIF, error) {
	tiff, err := findTIFF(b)
	if err != nil {
		return nil, err
	}
	return parseTIFF(tiff)
}

var errNoEXIF = errors.New("photo: no EXIF metadata")

// findTIFF returns the TIFF structure of a JPEG's APP1 Exif segment or a PNG's eXIf chunk.
func findTIFF(b []byte) ([]byte, error) {
	switch {
	case len(b) >= 2 && b[0] == 0xFF && b[1] == 0xD8: // JPEG
		i := 2
		for i+4 <= len(b) {
			if b[i] != 0xFF {
				return nil, errNoEXIF
			}
			m := b[i+1]
			if m == 0xFF { // fill byte
				i++
				continue
			}
			if m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7) {
				i += 2
				continue
			}
			if m == 0xDA || m == 0xD9 { // start of scan, end of image: metadata comes before
				return nil, errNoEXIF
			}
			n := int(binary.BigEndian.Uint16(b[i+2:]))
			if n < 2 || i+2+n > len(b) {
				return nil, errNoEXIF
			}
			seg := b[i+4 : i+2+n]
			if m == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
				return seg[6:], nil
			}
			i += 2 + n
		}
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")): // PNG
		i := 8
		for i+12 <= len(b) {
			n := binary.BigEndian.Uint32(b[i:])
			if n > uint32(len(b)-i-12) {
				return nil, errNoEXIF
			}
			typ := string(b[i+4 : i+8])
			if typ == "eXIf" {
				return b[i+8 : i+8+int(n)], nil
			}
			if typ == "IDAT" || typ == "IEND" { // eXIf must come before the image data
				return nil, errNoEXIF
			}
			i += 12 + int(n)
		}
	}
	return nil, errNoEXIF
}

// TIFF tags read.
const (
	tagExifIFD           = 0x8769
	tagGPSIFD            = 0x8825
	tagDateTimeOriginal  = 0x9003
	tagOffsetTimeOrig    = 0x9011
	tagGPSLatitudeRef    = 0x0001
	tagGPSLatitude       = 0x0002
	tagGPSLongitudeRef   = 0x0003
	tagGPSLongitude      = 0x0004
	maxIFDEntries        = 1024
	typeASCII, typeLong  = 2, 4
	typeRational, typeSh = 5, 3
)

type tiffReader struct {
	b  []byte
	bo binary.ByteOrder
}

// entry is one IFD entry: its type, count and the bytes of its value.
type entry struct {
	typ   uint16
	count uint32
	val   []byte
}

func parseTIFF(b []byte) (*EXIF, error) {
	if len(b) < 8 {
		return nil, errNoEXIF
	}
	r := tiffReader{b: b}
	switch string(b[:2]) {
	case "II":
		r.bo = binary.LittleEndian
	case "MM":
		r.bo = binary.BigEndian
	default:
		return nil, errNoEXIF
	}
	if r.bo.Uint16(b[2:]) != 42 {
		return nil, errNoEXIF
	}
	ifd0, err := r.ifd(r.bo.Uint32(b[4:]))
	if err != nil {
		return nil, err
	}
	x := &EXIF{}
	if e, ok := ifd0[tagExifIFD]; ok {
		if off, ok := r.long(e); ok {
			if sub, err := r.ifd(off); err == nil {
				x.TakenAt, x.ZoneStated = takenAt(r.ascii(sub[tagDateTimeOriginal]), r.ascii(sub[tagOffsetTimeOrig]))
			}
		}
	}
	if e, ok := ifd0[tagGPSIFD]; ok {
		if off, ok := r.long(e); ok {
			if g, err := r.ifd(off); err == nil {
				lat, okLat := r.degrees(g[tagGPSLatitude], r.ascii(g[tagGPSLatitudeRef]), "N", "S", 90)
				lon, okLon := r.degrees(g[tagGPSLongitude], r.ascii(g[tagGPSLongitudeRef]), "E", "W", 180)
				if okLat && okLon {
					x.Lat, x.Lon = &lat, &lon
				}
			}
		}
	}
	return x, nil
}

// ifd reads the IFD at off: its entries by tag (the first of a repeated tag).
func (r tiffReader) ifd(off uint32) (map[uint16]entry, error) {
	if uint64(off)+2 > uint64(len(r.b)) {
		return nil, errNoEXIF
	}
	n := int(r.bo.Uint16(r.b[off:]))
	if n > maxIFDEntries || int(off)+2+12*n > len(r.b) {
		return nil, errNoEXIF
	}
	out := make(map[uint16]entry, n)
	for i := range n {
		p := r.b[int(off)+2+12*i:]
		tag, typ, count := r.bo.Uint16(p), r.bo.Uint16(p[2:]), r.bo.Uint32(p[4:])
		size := map[uint16]uint64{1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8}[typ]
		if size == 0 {
			continue
		}
		total := size * uint64(count)
		var val []byte
		if total <= 4 {
			val = p[8 : 8+total]
		} else {
			vo := uint64(r.bo.Uint32(p[8:]))
			if vo+total > uint64(len(r.b)) {
				continue
			}
			val = r.b[vo : vo+total]
		}
		if _, dup := out[tag]; !dup {
			out[tag] = entry{typ: typ, count: count, val: val}
		}
	}
	return out, nil
}

// long is an entry's single LONG (or SHORT) value.
func (r tiffReader) long(e entry) (uint32, bool) {
	switch {
	case e.typ == typeLong && e.count == 1:
		return r.bo.Uint32(e.val), true
	case e.typ == typeSh && e.count == 1:
		return uint32(r.bo.Uint16(e.val)), true
	}
	return 0, false
}

// ascii is an ASCII entry's text up to its first NUL; "" when not ASCII.
func (r tiffReader) ascii(e entry) string {
	if e.typ != typeASCII {
		return ""
	}
	v := e.val
	if i := bytes.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e {
			return ""
		}
	}
	return string(v)
}

// degrees reads a GPS coordinate: three RATIONALs (degrees, minutes, seconds) and its
// hemisphere reference.
func (r tiffReader) degrees(e entry, ref, pos, neg string, limit float64) (float64, bool) {
	if e.typ != typeRational || e.count != 3 || (ref != pos && ref != neg) {
		return 0, false
	}
	var v [3]float64
	for i := range v {
		num, den := r.bo.Uint32(e.val[8*i:]), r.bo.Uint32(e.val[8*i+4:])
		if den == 0 {
			return 0, false
		}
		v[i] = float64(num) / float64(den)
	}
	if v[1] >= 60 || v[2] >= 60 {
		return 0, false
	}
	d := v[0] + v[1]/60 + v[2]/3600
	if d > limit || math.IsNaN(d) {
		return 0, false
	}
	if ref == neg {
		d = -d
	}
	return math.Round(d*1e7) / 1e7, true
}

// takenAt turns EXIF's "2006:01:02 15:04:05" and an optional "-03:00" into RFC 3339 (with the
// zone when stated). An invalid time gives "".
func takenAt(dt, offset string) (string, bool) {
	t, err := time.Parse("2006:01:02 15:04:05", dt)
	if err != nil || t.Year() < 1990 {
		return "", false
	}
	if offset != "" {
		if z, err := time.Parse("-07:00", offset); err == nil {
			_, secs := z.Zone()
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.FixedZone("", secs)).Format(time.RFC3339), true
		}
	}
	return t.Format("2006-01-02T15:04:05"), false
}
