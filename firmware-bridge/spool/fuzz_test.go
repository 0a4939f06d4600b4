package spool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fuzzSegment returns a segment holding records first, first+1, … with the given payloads.
func fuzzSegment(first uint64, payloads ...string) []byte {
	b := []byte(segMagic)
	for i, p := range payloads {
		b = appendRecord(b, first+uint64(i), []byte(p))
	}
	return b
}

// FuzzOpen writes arbitrary bytes as the only segment of a spool and opens it. Open must
// neither fail nor panic, and what it recovers must be consistent: increasing seqs, payloads
// that verify, a next seq above all of them, and the same records after a reopen.
//
// Every input opens a spool twice (with fsyncs), so minimizing a new input takes most of the
// default 60 s budget; run it with TMPDIR on a tmpfs and a shorter budget, e.g.
//
//	TMPDIR=/dev/shm go test -run '^$' -fuzz=FuzzOpen -fuzztime=45s -fuzzminimizetime=5s
func FuzzOpen(f *testing.F) {
	good := fuzzSegment(1, "alpha", "", "gamma gamma gamma", "delta")
	f.Add([]byte{})
	f.Add([]byte(segMagic))
	f.Add([]byte(segMagic[:5]))
	f.Add(good)
	f.Add(good[:len(good)-3])                     // torn tail
	f.Add(append(slices.Clone(good), 0, 0, 0, 0)) // zeros after the last record
	mid := slices.Clone(good)
	mid[segHdrSize+recHdrSize+5+recHdrSize-1] ^= 1 // damaged header of seq 2
	f.Add(mid)
	f.Add(good[segHdrSize:]) // records without the segment header
	f.Add(fuzzSegment(1, "x", "y", "z")[:segHdrSize+recHdrSize+1])

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, epochFile), []byte("e-0123456789ab\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, segName(1)), data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		recs, err := s.Pending(0, 1<<30)
		if err != nil {
			t.Fatalf("Pending: %v", err)
		}
		st := s.Stats()
		if len(recs) != st.Depth {
			t.Fatalf("%d pending, Stats %+v", len(recs), st)
		}
		var seqs []uint64
		for i, r := range recs {
			if r.Seq <= st.Acked || r.Seq > st.LastSeq || i > 0 && r.Seq <= recs[i-1].Seq {
				t.Fatalf("seq %d out of order; Stats %+v", r.Seq, st)
			}
			seqs = append(seqs, r.Seq)
		}
		seq, err := s.Append(func(seq uint64) ([]byte, error) { return []byte("next"), nil })
		if err != nil || seq != st.LastSeq+1 {
			t.Fatalf("Append = %d, %v; Stats %+v", seq, err, st)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		s, err = Open(dir, Options{})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer s.Close()
		recs2, err := s.Pending(0, 1<<30)
		if err != nil {
			t.Fatalf("Pending after reopen: %v", err)
		}
		var seqs2 []uint64
		for i, r := range recs2 {
			seqs2 = append(seqs2, r.Seq)
			if i < len(recs) && !slices.Equal(r.Payload, recs[i].Payload) {
				t.Fatalf("seq %d changed after reopen", r.Seq)
			}
		}
		if want := append(seqs, seq); !slices.Equal(seqs2, want) {
			t.Fatalf("after reopen: %v, want %v", seqs2, want)
		}
		if st2 := s.Stats(); st2.LastSeq != seq || st2.TornTails != 0 {
			t.Fatalf("after reopen: Stats %+v, appended %d", st2, seq)
		}
	})
}
