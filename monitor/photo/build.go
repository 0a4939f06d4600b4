package photo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// WithEXIF returns a copy of the JPEG jpg with an APP1 Exif segment stating taken (its wall
// time and offset) and, when lat and lon are not nil, a GPS position, as a phone camera writes
// them. It is what tests and demonstrations attach as an agent's photo.
func WithEXIF(jpg []byte, taken time.Time, lat, lon *float64) ([]byte, error) {
	if len(jpg) < 2 || jpg[0] != 0xFF || jpg[1] != 0xD8 {
		return nil, errors.New("photo: not a JPEG")
	}
	tiff := buildTIFF(taken, lat, lon)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	if len(seg)+2 > 0xFFFF {
		return nil, errors.New("photo: EXIF too large")
	}
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(len(seg)+2))
	out.Write(seg)
	out.Write(jpg[2:])
	return out.Bytes(), nil
}

// buildTIFF writes a big-endian TIFF: IFD0 with the Exif and GPS IFD pointers, the Exif IFD
// with DateTimeOriginal and OffsetTimeOriginal, the GPS IFD with the position.
func buildTIFF(taken time.Time, lat, lon *float64) []byte {
	type field struct {
		tag, typ uint16
		count    uint32
		data     []byte
	}
	bo := binary.BigEndian
	ascii := func(s string) []byte { return append([]byte(s), 0) }
	rational := func(v float64) []byte {
		v = math.Abs(v)
		d := math.Floor(v)
		m := math.Floor((v - d) * 60)
		s := ((v-d)*60 - m) * 60
		b := make([]byte, 24)
		bo.PutUint32(b[0:], uint32(d))
		bo.PutUint32(b[4:], 1)
		bo.PutUint32(b[8:], uint32(m))
		bo.PutUint32(b[12:], 1)
		bo.PutUint32(b[16:], uint32(math.Round(s*10000)))
		bo.PutUint32(b[20:], 10000)
		return b
	}
	long := func(v uint32) []byte { b := make([]byte, 4); bo.PutUint32(b, v); return b }
	_, off := taken.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	offset := sign + time.Date(0, 1, 1, off/3600, off%3600/60, 0, 0, time.UTC).Format("15:04")
	exif := []field{
		{tagDateTimeOriginal, typeASCII, 20, ascii(taken.Format("2006:01:02 15:04:05"))},
		{tagOffsetTimeOrig, typeASCII, 7, ascii(offset)},
	}
	var gps []field
	if lat != nil && lon != nil {
		ns, ew := "N", "E"
		if *lat < 0 {
			ns = "S"
		}
		if *lon < 0 {
			ew = "W"
		}
		gps = []field{
			{tagGPSLatitudeRef, typeASCII, 2, ascii(ns)},
			{tagGPSLatitude, typeRational, 3, rational(*lat)},
			{tagGPSLongitudeRef, typeASCII, 2, ascii(ew)},
			{tagGPSLongitude, typeRational, 3, rational(*lon)},
		}
	}
	// Layout: header (8), IFD0, Exif IFD, GPS IFD, then the values that do not fit inline.
	ifdSize := func(n int) int { return 2 + 12*n + 4 }
	ifd0N := 1
	if gps != nil {
		ifd0N = 2
	}
	ifd0At := 8
	exifAt := ifd0At + ifdSize(ifd0N)
	gpsAt := exifAt + ifdSize(len(exif))
	dataAt := gpsAt
	if gps != nil {
		dataAt += ifdSize(len(gps))
	}
	ifd0 := []field{{tagExifIFD, typeLong, 1, long(uint32(exifAt))}}
	if gps != nil {
		ifd0 = append(ifd0, field{tagGPSIFD, typeLong, 1, long(uint32(gpsAt))})
	}
	var head, data bytes.Buffer
	head.WriteString("MM")
	binary.Write(&head, bo, uint16(42))
	binary.Write(&head, bo, uint32(ifd0At))
	for _, ifd := range [][]field{ifd0, exif, gps} {
		if ifd == nil {
			continue
		}
		binary.Write(&head, bo, uint16(len(ifd)))
		for _, f := range ifd {
			binary.Write(&head, bo, f.tag)
			binary.Write(&head, bo, f.typ)
			binary.Write(&head, bo, f.count)
			if len(f.data) <= 4 {
				v := make([]byte, 4)
				copy(v, f.data)
				head.Write(v)
			} else {
				binary.Write(&head, bo, uint32(dataAt+data.Len()))
				data.Write(f.data)
			}
		}
		binary.Write(&head, bo, uint32(0)) // no next IFD
	}
	return append(head.Bytes(), data.Bytes()...)
}
