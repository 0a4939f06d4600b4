package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
)

// payloadFor returns the deterministic payload of seq: its seq and tag, then size-16 bytes
// of pseudo-random data seeded by both.
func payloadFor(seq, tag uint64, size int) []byte {
	size = max(size, 16)
	b := make([]byte, size)
	binary.LittleEndian.PutUint64(b[0:8], seq)
	binary.LittleEndian.PutUint64(b[8:16], tag)
	r := rand.NewChaCha8([32]byte{byte(seq), byte(seq >> 8), byte(seq >> 16), byte(tag)})
	r.Read(b[16:])
	return b
}

// checkPayload reports whether p is a payload payloadFor made for seq (with any tag and size).
func checkPayload(seq uint64, p []byte) bool {
	if len(p) < 16 || binary.LittleEndian.Uint64(p[0:8]) != seq {
		return false
	}
	return bytes.Equal(p, payloadFor(seq, binary.LittleEndian.Uint64(p[8:16]), len(p)))
}

func mustOpen(t testing.TB, dir string, opts Options) *Spool {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func mustClose(t testing.TB, s *Spool) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// appendN appends n batches of the given size and checks their seqs follow LastSeq.
func appendN(t testing.TB, s *Spool, n, size int) {
	t.Helper()
	for range n {
		want := s.LastSeq() + 1
		seq, err := s.Append(func(seq uint64) ([]byte, error) { return payloadFor(seq, 0, size), nil })
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		if seq != want {
			t.Fatalf("Append gave seq %d, want %d", seq, want)
		}
	}
}

// pendingAll returns every pending record, checking each payload.
func pendingAll(t testing.TB, s *Spool) []uint64 {
	t.Helper()
	recs, err := s.Pending(0, 1<<30)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	seqs := make([]uint64, len(recs))
	for i, r := range recs {
		if !checkPayload(r.Seq, r.Payload) {
			t.Fatalf("record %d: wrong payload", r.Seq)
		}
		seqs[i] = r.Seq
	}
	return seqs
}

func seqRange(from, to uint64) []uint64 {
	var s []uint64
	for q := from; q <= to; q++ {
		s = append(s, q)
	}
	return s
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// recordOffsets returns the offset of each record in a segment file.
func recordOffsets(t testing.TB, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := parseSegName(filepath.Base(path))
	sc := scanSegment(b, first, 0)
	if len(sc.bad) != 0 {
		t.Fatalf("%s is damaged: %v", path, sc.bad)
	}
	var offs []int64
	for _, r := range sc.recs {
		offs = append(offs, r.off)
	}
	return offs
}

func flipByte(t testing.TB, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == lockFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFormatConstants(t *testing.T) {
	if segHdrSize != len(segMagic) {
		t.Fatalf("segHdrSize %d, magic %d bytes", segHdrSize, len(segMagic))
	}
	for _, first := range []uint64{1, 42, 1<<64 - 1} {
		got, ok := parseSegName(segName(first))
		if !ok || got != first {
			t.Errorf("parseSegName(segName(%d)) = %d, %v", first, got, ok)
		}
	}
	for _, name := range []string{"00000000000000000000.seg", "1.seg", "0000000000000000000a.seg", "00000000000000000001.tmp", "99999999999999999999.seg"} {
		if _, ok := parseSegName(name); ok {
			t.Errorf("parseSegName(%q) accepted", name)
		}
	}
}

func TestEpoch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "spool")
	s := mustOpen(t, dir, Options{})
	epoch := s.Epoch()
	if !regexp.MustCompile(`^e-[0-9a-f]{12}$`).MatchString(epoch) {
		t.Fatalf("epoch %q", epoch)
	}
	if s.LastSeq() != 0 || s.Depth() != 0 {
		t.Fatalf("new spool: LastSeq %d, Depth %d", s.LastSeq(), s.Depth())
	}
	appendN(t, s, 3, 100)
	mustClose(t, s)
	if b, err := os.ReadFile(filepath.Join(dir, epochFile)); err != nil || string(b) != epoch+"\n" {
		t.Fatalf("epoch file %q, %v", b, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+tmpExt)); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}

	s = mustOpen(t, dir, Options{})
	if s.Epoch() != epoch {
		t.Fatalf("epoch after reopen %q, want %q", s.Epoch(), epoch)
	}
	if got := s.Stats().Epoch; got != epoch {
		t.Fatalf("Stats().Epoch %q", got)
	}
	mustClose(t, s)

	other := mustOpen(t, t.TempDir(), Options{})
	if other.Epoch() == epoch {
		t.Fatalf("two spools share epoch %q", epoch)
	}
	mustClose(t, other)

	// A spool whose epoch file disappeared or is damaged must not start a new epoch under
	// the old seqs.
	if err := os.WriteFile(filepath.Join(dir, epochFile), []byte("e-\x00junk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrBadEpoch) {
		t.Fatalf("Open with a damaged epoch: %v, want ErrBadEpoch", err)
	}
	if err := os.Remove(filepath.Join(dir, epochFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrBadEpoch) {
		t.Fatalf("Open without an epoch: %v, want ErrBadEpoch", err)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	mustClose(t, s)
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Append(func(uint64) ([]byte, error) { return []byte("x"), nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	mustClose(t, mustOpen(t, dir, Options{}))
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{SegmentSize: -1}, {MaxBytes: -1}, {SyncEvery: -1}} {
		if _, err := Open(t.TempDir(), o); err == nil {
			t.Errorf("Open(%+v) succeeded", o)
		}
	}
}

func TestAppendAckReopen(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	appendN(t, s, 10, 300)
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 10)) {
		t.Fatalf("Pending = %v", got)
	}
	recs, err := s.Pending(7, 2)
	if err != nil || len(recs) != 2 || recs[0].Seq != 8 || recs[1].Seq != 9 {
		t.Fatalf("Pending(7, 2) = %v, %v", recs, err)
	}
	for q := uint64(1); q <= 4; q++ {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Ack(2); err != nil { // again: ignored
		t.Fatal(err)
	}
	if err := s.Ack(11); err == nil {
		t.Fatal("Ack of a seq never appended succeeded")
	}
	if d := s.Depth(); d != 6 {
		t.Fatalf("Depth %d, want 6", d)
	}
	if st := s.Stats(); st.Acked != 4 || st.LastSeq != 10 {
		t.Fatalf("Stats %+v", st)
	}
	mustClose(t, s)

	s = mustOpen(t, dir, Options{})
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(5, 10)) {
		t.Fatalf("Pending after reopen = %v", got)
	}
	if s.LastSeq() != 10 || s.Depth() != 6 {
		t.Fatalf("LastSeq %d Depth %d", s.LastSeq(), s.Depth())
	}
	select {
	case <-s.Notify():
	default:
		t.Fatal("no notification for batches pending at Open")
	}
	appendN(t, s, 1, 300)
	for q := uint64(5); q <= 11; q++ {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	if d, b := s.Depth(), s.Bytes(); d != 0 || b <= 0 {
		t.Fatalf("Depth %d, Bytes %d", d, b)
	}
	mustClose(t, s)

	s = mustOpen(t, dir, Options{})
	defer mustClose(t, s)
	if got := pendingAll(t, s); len(got) != 0 || s.LastSeq() != 11 {
		t.Fatalf("Pending %v, LastSeq %d", got, s.LastSeq())
	}
	appendN(t, s, 1, 300)
}

func TestAppendErrors(t *testing.T) {
	s := mustOpen(t, t.TempDir(), Options{})
	defer mustClose(t, s)
	appendN(t, s, 2, 50)
	boom := errors.New("boom")
	if _, err := s.Append(func(seq uint64) ([]byte, error) {
		if seq != 3 {
			t.Errorf("build got seq %d", seq)
		}
		return nil, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Append: %v", err)
	}
	if _, err := s.Append(func(uint64) ([]byte, error) { return make([]byte, MaxPayload+1), nil }); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append of %d bytes: %v", MaxPayload+1, err)
	}
	// The failed appends consumed no seq.
	seq, err := s.Append(func(seq uint64) ([]byte, error) { return payloadFor(seq, 0, MaxPayload), nil })
	if err != nil || seq != 3 {
		t.Fatalf("Append = %d, %v; want 3", seq, err)
	}
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 3)) {
		t.Fatalf("Pending = %v", got)
	}
}

func TestOutOfOrderAcks(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 300} // two 100-byte batches per segment
	s := mustOpen(t, dir, opts)
	appendN(t, s, 20, 100)
	if n := len(segFiles(t, dir)); n != 10 {
		t.Fatalf("%d segments, want 10", n)
	}
	for q := uint64(2); q <= 20; q += 2 {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := pendingAll(t, s), []uint64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}; !slices.Equal(got, want) {
		t.Fatalf("Pending = %v", got)
	}
	if st := s.Stats(); st.Depth != 10 || st.Acked != 0 || st.Segments != 10 {
		t.Fatalf("Stats %+v", st)
	}
	// Acking 1 and 3 frees the prefix 1..4: two segments.
	for _, q := range []uint64{3, 1} {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Acked != 4 || st.Segments != 8 || st.Depth != 8 {
		t.Fatalf("Stats %+v", st)
	}
	mustClose(t, s)

	// After a restart the out-of-order acks are forgotten: everything above the prefix comes
	// back (duplicates), with no gap.
	s = mustOpen(t, dir, opts)
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(5, 20)) {
		t.Fatalf("Pending after reopen = %v", got)
	}
	for _, q := range []uint64{20, 6, 5, 19, 8, 7, 10, 9, 11, 12, 13, 14, 15, 16, 17, 18} {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	// The last segment stays, to keep the next seq on disk.
	if st := s.Stats(); st.Acked != 20 || st.Depth != 0 || st.Segments != 1 {
		t.Fatalf("Stats %+v", st)
	}
	mustClose(t, s)

	// Even without the state file the seq continues.
	if err := os.Remove(filepath.Join(dir, stateFile)); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, opts)
	defer mustClose(t, s)
	if s.LastSeq() != 20 {
		t.Fatalf("LastSeq %d, want 20", s.LastSeq())
	}
	appendN(t, s, 1, 100)
}

func TestSyncEvery(t *testing.T) {
	s := mustOpen(t, t.TempDir(), Options{SyncEvery: 3})
	defer mustClose(t, s)
	appendN(t, s, 2, 100)
	if got := pendingAll(t, s); len(got) != 0 {
		t.Fatalf("Pending before fsync = %v", got)
	}
	appendN(t, s, 2, 100)
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 3)) {
		t.Fatalf("Pending = %v", got)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 4)) {
		t.Fatalf("Pending after Sync = %v", got)
	}
}

func TestLargeBatchOwnSegment(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{SegmentSize: 1000})
	appendN(t, s, 1, 100)
	appendN(t, s, 1, 5000)
	appendN(t, s, 1, 100)
	if n := len(segFiles(t, dir)); n != 3 {
		t.Fatalf("%d segments, want 3", n)
	}
	mustClose(t, s)
	s = mustOpen(t, dir, Options{SegmentSize: 1000})
	defer mustClose(t, s)
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 3)) {
		t.Fatalf("Pending = %v", got)
	}
}

// TestTornTail cuts the last record at every byte and reopens: the records before it survive,
// and the cut seq (which Append never reported as stored) is given again.
func TestTornTail(t *testing.T) {
	base := t.TempDir()
	orig := filepath.Join(base, "orig")
	s := mustOpen(t, orig, Options{})
	appendN(t, s, 4, 200)
	appendN(t, s, 1, 61)
	mustClose(t, s)
	segs := segFiles(t, orig)
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	offs := recordOffsets(t, segs[0])
	start := offs[len(offs)-1]
	fi, err := os.Stat(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	end := fi.Size()

	torn := 0
	for cut := start; cut < end; cut++ {
		dir := filepath.Join(base, "cut")
		os.RemoveAll(dir)
		copyDir(t, orig, dir)
		if err := os.Truncate(filepath.Join(dir, filepath.Base(segs[0])), cut); err != nil {
			t.Fatal(err)
		}
		s := mustOpen(t, dir, Options{})
		st := s.Stats()
		wantTorn := 1
		if cut == start {
			wantTorn = 0 // the file ends on a record boundary
		}
		if st.TornTails != wantTorn || st.TruncatedBytes != cut-start || st.Lost != 0 || st.CorruptRegions != 0 {
			t.Fatalf("cut at %d: Stats %+v", cut, st)
		}
		torn += st.TornTails
		if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 4)) {
			t.Fatalf("cut at %d: Pending = %v", cut, got)
		}
		appendN(t, s, 1, 77) // seq 5 again: it was never stored
		mustClose(t, s)
		s = mustOpen(t, dir, Options{})
		if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 5)) || s.Stats().TornTails != 0 {
			t.Fatalf("cut at %d, after append and reopen: Pending = %v, Stats %+v", cut, got, s.Stats())
		}
		mustClose(t, s)
	}
	if want := int(end - start - 1); torn != want {
		t.Fatalf("%d torn tails, want %d", torn, want)
	}

	// Garbage (here: zeros, as a filesystem may leave after a power cut) instead of a
	// shorter file is a torn tail too.
	for _, at := range []int64{start, start + 4, start + 20, end - 1} {
		dir := filepath.Join(base, "zero")
		os.RemoveAll(dir)
		copyDir(t, orig, dir)
		path := filepath.Join(dir, filepath.Base(segs[0]))
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(make([]byte, end-at), at); err != nil {
			t.Fatal(err)
		}
		f.Close()
		s := mustOpen(t, dir, Options{})
		if st := s.Stats(); st.TornTails != 1 || st.Lost != 0 {
			t.Fatalf("zeros from %d: Stats %+v", at, st)
		}
		if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 4)) {
			t.Fatalf("zeros from %d: Pending = %v", at, got)
		}
		mustClose(t, s)
	}
}

// TestTornSegmentCreation: a new segment whose header did not reach the disk is removed.
func TestTornSegmentCreation(t *testing.T) {
	for n := range segHdrSize {
		dir := t.TempDir()
		s := mustOpen(t, dir, Options{})
		appendN(t, s, 3, 100)
		mustClose(t, s)
		if err := os.WriteFile(filepath.Join(dir, segName(4)), []byte(segMagic[:n]), 0o600); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, dir, Options{})
		if st := s.Stats(); st.TornTails != 1 || st.Segments != 1 || st.Lost != 0 {
			t.Fatalf("header of %d bytes: Stats %+v", n, st)
		}
		appendN(t, s, 1, 100)
		if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 4)) {
			t.Fatalf("Pending = %v", got)
		}
		mustClose(t, s)
	}
}

// TestCorruptMiddle: a record that fails its checksum with good records after it is damage,
// not a torn write: the records around it survive, its seq is a gap, and the segment is
// quarantined once the rest is acknowledged.
func TestCorruptMiddle(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	appendN(t, s, 10, 150)
	mustClose(t, s)
	path := segFiles(t, dir)[0]
	offs := recordOffsets(t, path)
	flipByte(t, path, offs[4]+recHdrSize+30) // payload of seq 5

	s = mustOpen(t, dir, Options{})
	st := s.Stats()
	if st.Lost != 1 || st.CorruptRegions != 1 || st.TornTails != 0 || st.Depth != 9 || st.LastSeq != 10 {
		t.Fatalf("Stats %+v", st)
	}
	want := []uint64{1, 2, 3, 4, 6, 7, 8, 9, 10}
	if got := pendingAll(t, s); !slices.Equal(got, want) {
		t.Fatalf("Pending = %v", got)
	}
	appendN(t, s, 1, 150)
	if n := len(segFiles(t, dir)); n != 2 {
		t.Fatalf("%d segments, want 2 (a damaged segment is not appended to)", n)
	}
	mustClose(t, s)

	// The damage is found again on the next open, until the segment is reclaimed.
	s = mustOpen(t, dir, Options{})
	if got := pendingAll(t, s); !slices.Equal(got, append(want, 11)) {
		t.Fatalf("Pending = %v", got)
	}
	for _, q := range append(want, 11) {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Quarantined != 1 || st.Segments != 1 || st.Acked != 11 {
		t.Fatalf("Stats %+v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, quarantineDir, filepath.Base(path))); err != nil {
		t.Fatalf("quarantined segment: %v", err)
	}
	mustClose(t, s)
}

// TestCorruptSealedSegment damages the header of a record in a segment that is not the last
// one: the scan loses its length, and must find the next record again.
func TestCorruptSealedSegment(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1100}
	s := mustOpen(t, dir, opts)
	appendN(t, s, 12, 200) // five per segment
	mustClose(t, s)
	segs := segFiles(t, dir)
	if len(segs) != 3 {
		t.Fatalf("segments %v", segs)
	}
	offs := recordOffsets(t, segs[0])
	flipByte(t, segs[0], offs[1]+5) // length of seq 2
	flipByte(t, segs[1], offs[4]+9) // seq of seq 10 (the last of its segment)

	s = mustOpen(t, dir, opts)
	defer mustClose(t, s)
	st := s.Stats()
	if st.Lost != 2 || st.CorruptRegions != 2 || st.LastSeq != 12 {
		t.Fatalf("Stats %+v", st)
	}
	want := []uint64{1, 3, 4, 5, 6, 7, 8, 9, 11, 12}
	if got := pendingAll(t, s); !slices.Equal(got, want) {
		t.Fatalf("Pending = %v", got)
	}
	appendN(t, s, 1, 200)
}

// TestCorruptLastSegmentTail: when the last segment is damaged in the middle, a bad end cannot
// be called a torn write, so every seq it could have held is skipped rather than reused.
func TestCorruptLastSegmentTail(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	appendN(t, s, 10, 100)
	mustClose(t, s)
	path := segFiles(t, dir)[0]
	offs := recordOffsets(t, path)
	flipByte(t, path, offs[2]+20) // seq 3
	flipByte(t, path, offs[9]+20) // seq 10, the last

	s = mustOpen(t, dir, Options{})
	defer mustClose(t, s)
	st := s.Stats()
	reserved := uint64(recHdrSize+100) / recHdrSize // seqs a 116-byte tail could hold
	if st.LastSeq != 9+reserved || st.Lost != 1+reserved {
		t.Fatalf("Stats %+v", st)
	}
	if got, want := pendingAll(t, s), []uint64{1, 2, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
		t.Fatalf("Pending = %v", got)
	}
	seq, err := s.Append(func(seq uint64) ([]byte, error) { return payloadFor(seq, 0, 100), nil })
	if err != nil || seq <= 10 {
		t.Fatalf("Append = %d, %v: reuses a seq that may have been published", seq, err)
	}
	for _, r := range []uint64{1, 2, 4, 5, 6, 7, 8, 9} {
		if err := s.Ack(r); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Acked != seq-1 || st.Quarantined != 1 {
		t.Fatalf("Stats %+v", st)
	}
}

// TestCorruptOnRead: a record damaged after Open is skipped by Pending, not returned.
func TestCorruptOnRead(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	defer mustClose(t, s)
	appendN(t, s, 5, 100)
	path := segFiles(t, dir)[0]
	offs := recordOffsets(t, path)
	flipByte(t, path, offs[2]+recHdrSize+1)
	if got, want := pendingAll(t, s), []uint64{1, 2, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("Pending = %v", got)
	}
	if st := s.Stats(); st.Lost != 1 || st.Depth != 4 {
		t.Fatalf("Stats %+v", st)
	}
}

func TestDamagedState(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	appendN(t, s, 5, 100)
	for q := uint64(1); q <= 3; q++ {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, s)
	if err := os.WriteFile(filepath.Join(dir, stateFile), bytes.Repeat([]byte{0xff}, 64), 0o600); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, Options{})
	defer mustClose(t, s)
	if st := s.Stats(); !st.StateReset || st.Lost != 0 || st.LastSeq != 5 {
		t.Fatalf("Stats %+v", st)
	}
	if got := pendingAll(t, s); !slices.Equal(got, seqRange(1, 5)) {
		t.Fatalf("Pending = %v", got)
	}
}

func TestStateSlots(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for gen := uint64(1); gen <= 5; gen++ {
		if err := writeState(f, state{gen: gen, acked: gen * 10, evicted: gen}, false); err != nil {
			t.Fatal(err)
		}
	}
	st, ok, err := readState(f)
	if err != nil || !ok || st.gen != 5 || st.acked != 50 {
		t.Fatalf("readState = %+v, %v, %v", st, ok, err)
	}
	// A torn write of the newest slot falls back to the previous generation.
	if _, err := f.WriteAt([]byte{0xde, 0xad}, int64(5%2)*stateSlotSize+20); err != nil {
		t.Fatal(err)
	}
	st, ok, err = readState(f)
	if err != nil || !ok || st.gen != 4 || st.acked != 40 || st.evicted != 4 {
		t.Fatalf("readState after a torn write = %+v, %v, %v", st, ok, err)
	}
}

// TestEviction fills a small spool: the oldest segments go, the unacknowledged batches in them
// are counted, the count survives a restart, and what stays has no gap.
func TestEviction(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1024, MaxBytes: 4096}
	s := mustOpen(t, dir, opts)
	acked := map[uint64]bool{}
	for i := range 100 {
		appendN(t, s, 1, 200)
		if b := s.Bytes(); b > opts.MaxBytes {
			t.Fatalf("Bytes %d over MaxBytes", b)
		}
		if i%7 == 3 { // acknowledge a few, out of order
			q := s.LastSeq() - 1
			if err := s.Ack(q); err != nil {
				t.Fatal(err)
			}
			acked[q] = true
		}
	}
	// What stays is every unacknowledged seq from the first one kept to the last.
	pending := pendingAll(t, s)
	if len(pending) == 0 {
		t.Fatal("nothing pending")
	}
	var kept []uint64
	for q := pending[0]; q <= 100; q++ {
		if !acked[q] {
			kept = append(kept, q)
		}
	}
	if !slices.Equal(pending, kept) {
		t.Fatalf("Pending = %v, want %v", pending, kept)
	}
	// Every seq is pending, acknowledged or evicted, exactly once.
	want := uint64(100 - len(pending) - len(acked))
	st := s.Stats()
	if st.Evicted != want || st.Evicted == 0 || st.Depth != len(pending) {
		t.Fatalf("Evicted %d, want %d; Stats %+v", st.Evicted, want, st)
	}
	if st.Acked != pending[0]-1 {
		t.Fatalf("Acked %d, first pending %d", st.Acked, pending[0])
	}
	// Acking an evicted seq is harmless.
	if err := s.Ack(1); err != nil {
		t.Fatal(err)
	}
	mustClose(t, s)

	s = mustOpen(t, dir, opts)
	defer mustClose(t, s)
	if s.Evicted() != want {
		t.Fatalf("Evicted after reopen %d, want %d", s.Evicted(), want)
	}
	if got := pendingAll(t, s); got[0] != pending[0] || got[len(got)-1] != 100 {
		t.Fatalf("Pending after reopen = %v", got)
	}
	if _, err := s.Append(func(uint64) ([]byte, error) { return make([]byte, 5000), nil }); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append larger than MaxBytes: %v", err)
	}
}

// TestConcurrent runs one appending and one publishing goroutine (run it with -race).
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{SegmentSize: 8 << 10, SyncEvery: 4})
	const n = 600
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			if _, err := s.Append(func(seq uint64) ([]byte, error) { return payloadFor(seq, 0, 100+i%900), nil }); err != nil {
				t.Error(err)
				return
			}
		}
		if err := s.Sync(); err != nil {
			t.Error(err)
		}
	}()

	// The publisher sends in order and acknowledges in shuffled windows of up to 8.
	rng := rand.New(rand.NewPCG(1, 2))
	var cursor uint64
	var window []uint64
	seen := 0
	for seen < n {
		<-s.Notify()
		for {
			recs, err := s.Pending(cursor, 8)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				break
			}
			for _, r := range recs {
				if r.Seq != cursor+1 || !checkPayload(r.Seq, r.Payload) {
					t.Fatalf("got seq %d after %d", r.Seq, cursor)
				}
				cursor = r.Seq
				seen++
				window = append(window, r.Seq)
			}
			rng.Shuffle(len(window), func(i, j int) { window[i], window[j] = window[j], window[i] })
			k := rng.IntN(len(window) + 1)
			for _, q := range window[:k] {
				if err := s.Ack(q); err != nil {
					t.Fatal(err)
				}
			}
			window = slices.Delete(window, 0, k)
		}
	}
	wg.Wait()
	for _, q := range window {
		if err := s.Ack(q); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Depth != 0 || st.Acked != n || st.Segments != 1 {
		t.Fatalf("Stats %+v", st)
	}
	mustClose(t, s)
}

// TestEvictActive: with room for one segment only, the segment being appended to is evicted
// too, and the next seq still follows.
func TestEvictActive(t *testing.T) {
	dir := t.TempDir()
	opts := Options{MaxBytes: 600}
	s := mustOpen(t, dir, opts)
	appendN(t, s, 7, 200) // 216-byte records: two fit
	if st := s.Stats(); st.Evicted != 6 || st.Depth != 1 || st.Segments != 1 || st.Acked != 6 || st.Bytes > opts.MaxBytes {
		t.Fatalf("Stats %+v", st)
	}
	mustClose(t, s)
	s = mustOpen(t, dir, opts)
	defer mustClose(t, s)
	if got := pendingAll(t, s); !slices.Equal(got, []uint64{7}) || s.Evicted() != 6 {
		t.Fatalf("Pending = %v, Evicted %d", got, s.Evicted())
	}
	appendN(t, s, 1, 200)
}
