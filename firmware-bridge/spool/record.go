package spool

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// MaxPayload is the largest payload Append accepts: the wire format's limit for one batch.
const MaxPayload = 256 << 10

const (
	segMagic   = "TZSPOOL1"
	segHdrSize = 8 // len(segMagic)
	recHdrSize = 16
	segExt     = ".seg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segName is the file name of the segment whose first record has seq first.
func segName(first uint64) string {
	return fmt.Sprintf("%020d%s", first, segExt)
}

// parseSegName returns the first seq of the segment file called name.
func parseSegName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segExt)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	first, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || first == 0 {
		return 0, false
	}
	return first, true
}

// appendRecord appends the encoded record (seq, payload) to dst.
func appendRecord(dst []byte, seq uint64, payload []byte) []byte {
	var h [recHdrSize]byte
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:16], seq)
	crc := crc32.Update(0, castagnoli, h[4:])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[0:4], crc)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// parseRecord checks the record at buf[off:] and returns its seq and payload length. It
// accepts only a whole record whose seq is in [lo, hi) and whose checksum is right.
func parseRecord(buf []byte, off int, lo, hi uint64) (seq uint64, n int, ok bool) {
	if off < 0 || len(buf)-off < recHdrSize {
		return 0, 0, false
	}
	h := buf[off : off+recHdrSize]
	n = int(binary.LittleEndian.Uint32(h[4:8]))
	if n > MaxPayload || len(buf)-off-recHdrSize < n {
		return 0, 0, false
	}
	seq = binary.LittleEndian.Uint64(h[8:16])
	if seq < lo || seq >= hi {
		return 0, 0, false
	}
	crc := crc32.Update(0, castagnoli, h[4:])
	crc = crc32.Update(crc, castagnoli, buf[off+recHdrSize:off+recHdrSize+n])
	if crc != binary.LittleEndian.Uint32(h[0:4]) {
		return 0, 0, false
	}
	return seq, n, true
}

// recEntry is the index entry of one verified record.
type recEntry struct {
	seq  uint64
	off  int64  // offset of the record header in its segment
	n    uint32 // payload length
	done bool   // acknowledged, or unreadable when read back
}

// region is a byte range [start, end) of a segment that holds no verifiable record.
type region struct{ start, end int64 }

// scan is what scanSegment found in a segment.
type scan struct {
	recs []recEntry
	bad  []region
	// magicOK reports whether the segment starts with segMagic.
	magicOK bool
	// next is the seq the record after the last verified one would have.
	next uint64
}

// scanSegment indexes the records of buf, the contents of the segment whose name says its
// first seq is first. If limit is not zero, it is the first seq of the next segment: no record
// of this one may have it or a higher one.
//
// Records are read one after the other, each expected to carry the seq after the previous one.
// When one fails its check, scanSegment searches forward, byte by byte, for the next record
// whose checksum is right and whose seq is plausible (not below the expected seq, and below
// both limit and the most records the segment could hold), records the bytes in between as a
// bad region and carries on from there.
func scanSegment(buf []byte, first, limit uint64) scan {
	// A segment of len(buf) bytes cannot hold len(buf)/recHdrSize records.
	hi := first + uint64(len(buf)/recHdrSize)
	if hi < first { // overflow: a corrupt name near the top of the seq space
		hi = ^uint64(0)
	}
	if limit != 0 && limit < hi {
		hi = limit
	}
	s := scan{next: first}
	off := 0
	if len(buf) >= segHdrSize && string(buf[:segHdrSize]) == segMagic {
		s.magicOK = true
		off = segHdrSize
	}
	for off < len(buf) {
		if s.next < hi {
			if seq, n, ok := parseRecord(buf, off, s.next, s.next+1); ok {
				s.recs = append(s.recs, recEntry{seq: seq, off: int64(off), n: uint32(n)})
				off += recHdrSize + n
				s.next = seq + 1
				continue
			}
		}
		start := off
		off = -1
		var seq uint64
		for p := start + 1; p+recHdrSize <= len(buf); p++ {
			if q, _, ok := parseRecord(buf, p, s.next, hi); ok {
				off, seq = p, q
				break
			}
		}
		if off < 0 {
			s.bad = append(s.bad, region{int64(start), int64(len(buf))})
			break
		}
		s.bad = append(s.bad, region{int64(start), int64(off)})
		s.next = seq
	}
	return s
}
