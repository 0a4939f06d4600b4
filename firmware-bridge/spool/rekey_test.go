package spool

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rekeyTag re-keys a test payload by prefixing it with its new epoch and seq; the old epoch is
// "e-old" unless the payload says "undecodable".
func rekeyTag(payload []byte, epoch string, seq uint64) ([]byte, string, error) {
	if strings.HasPrefix(string(payload), "undecodable") {
		return nil, "", fmt.Errorf("not a batch")
	}
	return fmt.Appendf(nil, "%s/%d/%s", epoch, seq, payload), "e-old", nil
}

// lostEpochSpool makes a spool with old payloads "old-1" … "old-30" in several segments,
// the first five acknowledged.
func lostEpochSpool(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{SegmentSize: 200})
	for range 30 {
		if _, err := s.Append(func(seq uint64) ([]byte, error) { return fmt.Appendf(nil, "old-%d", seq), nil }); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if err := s.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	if s.Stats().Segments < 3 {
		t.Fatalf("%d segments, want several", s.Stats().Segments)
	}
	mustClose(t, s)
	return dir
}

// checkRekeyed checks that s holds old-6 … old-30 re-keyed as seqs 1 … 25 of its epoch.
func checkRekeyed(t *testing.T, s *Spool) {
	t.Helper()
	recs, err := s.Pending(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 25 {
		t.Fatalf("%d batches pending after the recovery, want 25", len(recs))
	}
	for i, r := range recs {
		want := fmt.Sprintf("%s/%d/old-%d", s.Epoch(), i+1, i+6)
		if r.Seq != uint64(i+1) || string(r.Payload) != want {
			t.Errorf("batch %d: seq %d %q, want seq %d %q", i, r.Seq, r.Payload, i+1, want)
		}
	}
	if st := s.Stats(); st.PreviousEpoch != "e-old" || st.LastSeq != 25 || st.Depth != 25 {
		t.Errorf("stats after the recovery: %+v", st)
	}
}

// TestLostEpochIsRecovered: without its epoch file, or with a damaged one, a spool with Rekey
// starts a new epoch and keeps every unacknowledged batch under it, seqs from 1.
func TestLostEpochIsRecovered(t *testing.T) {
	for _, damage := range []string{"missing", "damaged"} {
		t.Run(damage, func(t *testing.T) {
			dir := lostEpochSpool(t)
			old, err := readEpoch(dir)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "missing" {
				err = os.Remove(filepath.Join(dir, epochFile))
			} else {
				err = os.WriteFile(filepath.Join(dir, epochFile), []byte("e-\x00junk\n"), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			s := mustOpen(t, dir, Options{SegmentSize: 200, Rekey: rekeyTag})
			if s.Epoch() == old || !validEpoch(s.Epoch()) {
				t.Errorf("epoch after the recovery %q (old %q)", s.Epoch(), old)
			}
			if st := s.Stats(); !st.EpochLost || st.Rekeyed != 25 {
				t.Errorf("stats: EpochLost %v, Rekeyed %d; want true, 25", st.EpochLost, st.Rekeyed)
			}
			checkRekeyed(t, s)
			// The new epoch goes on from there.
			seq, err := s.Append(func(seq uint64) ([]byte, error) { return []byte("new"), nil })
			if err != nil || seq != 26 {
				t.Fatalf("Append after the recovery: %d, %v", seq, err)
			}
			epoch := s.Epoch()
			mustClose(t, s)

			// Reopened (even without Rekey): the same epoch, still linked to the old one.
			s = mustOpen(t, dir, Options{})
			defer mustClose(t, s)
			if st := s.Stats(); s.Epoch() != epoch || st.EpochLost || st.PreviousEpoch != "e-old" || st.Depth != 26 {
				t.Errorf("reopened: epoch %q, stats %+v", s.Epoch(), st)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.IsDir() && e.Name() != quarantineDir {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

// TestLostEpochUnknownAndUnreadable: batches Rekey refuses are counted lost; with none that
// names its epoch the previous epoch is unknown; a spool with only a state file recovers too.
func TestLostEpochUnknownAndUnreadable(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, Options{})
	for range 3 {
		s.Append(func(seq uint64) ([]byte, error) { return []byte("undecodable"), nil })
	}
	mustClose(t, s)
	os.Remove(filepath.Join(dir, epochFile))
	s = mustOpen(t, dir, Options{Rekey: rekeyTag})
	if st := s.Stats(); st.PreviousEpoch != UnknownEpoch || st.Lost != 3 || st.Depth != 0 || st.Rekeyed != 0 {
		t.Errorf("stats %+v", st)
	}
	mustClose(t, s)

	// A fresh epoch (an empty directory) replaces nothing.
	for _, name := range []string{epochFile, stateFile, previousFile} {
		os.Remove(filepath.Join(dir, name))
	}
	s = mustOpen(t, dir, Options{Rekey: rekeyTag})
	if st := s.Stats(); st.PreviousEpoch != "" || st.EpochLost {
		t.Errorf("fresh spool: %+v", st)
	}
	mustClose(t, s)
}

// TestLostEpochRecoveryResumes: a recovery interrupted at any step after the re-keyed spool
// was staged is finished by the next Open, with nothing lost or doubled; one interrupted
// before is started again.
func TestLostEpochRecoveryResumes(t *testing.T) {
	for _, step := range []string{"staging", "staged", "old deleted", "half moved"} {
		t.Run(step, func(t *testing.T) {
			dir := lostEpochSpool(t)
			os.Remove(filepath.Join(dir, epochFile))
			entries, _ := os.ReadDir(dir)
			var firsts []uint64
			for _, e := range entries {
				if f, ok := parseSegName(e.Name()); ok {
					firsts = append(firsts, f)
				}
			}
			sp := &Spool{dir: dir, opts: Options{SegmentSize: 200, Rekey: rekeyTag}, log: slog.New(slog.DiscardHandler)}
			if err := sp.stageRekey(firsts, true, nil); err != nil {
				t.Fatal(err)
			}
			done := filepath.Join(dir, rekeyDone)
			switch step {
			case "staging": // the stage had not been renamed yet
				if err := os.Rename(done, filepath.Join(dir, rekeyStage)); err != nil {
					t.Fatal(err)
				}
			case "old deleted", "half moved":
				for _, f := range firsts {
					os.Remove(filepath.Join(dir, segName(f)))
				}
				os.WriteFile(filepath.Join(done, rekeyMoving), nil, 0o600)
				if step == "half moved" {
					os.Rename(filepath.Join(done, segName(1)), filepath.Join(dir, segName(1)))
					os.Rename(filepath.Join(done, stateFile), filepath.Join(dir, stateFile))
				}
			}
			s := mustOpen(t, dir, Options{SegmentSize: 200, Rekey: rekeyTag})
			defer mustClose(t, s)
			checkRekeyed(t, s)
		})
	}
}
