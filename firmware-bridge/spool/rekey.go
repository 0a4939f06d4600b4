package spool

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Rekeyer re-encodes a batch stored under an epoch that was lost for the new epoch and seq, and
// returns the new payload and the epoch the old payload carried ("" if it cannot tell). See
// Options.Rekey.
type Rekeyer func(payload []byte, epoch string, seq uint64) (rekeyed []byte, oldEpoch string, err error)

// Files of the recovery of a lost epoch.
const (
	rekeyStage   = "rekey.new"      // being written; removed if found at Open
	rekeyDone    = "rekey.done"     // complete: Open finishes moving it into the spool
	rekeyMoving  = "moving"         // in rekeyDone: the old segments are deleted already
	previousFile = "previous-epoch" // the epoch the current one replaced, or UnknownEpoch
)

// UnknownEpoch is Stats.PreviousEpoch when the spool lost its epoch and no stored batch told
// which it was.
const UnknownEpoch = "unknown"

// recoverEpoch starts a new epoch in a directory whose epoch file is missing or damaged while
// it holds spool data (cause says which), and keeps the unacknowledged batches: each is passed
// to Options.Rekey and stored under the new epoch with seqs from 1, in the old order. A batch
// that Rekey refuses is counted in Stats.Lost.
//
// The new spool is written whole in rekey.new/ and renamed rekey.done/ once durable; only then
// are the old segments deleted and the new files moved in, the epoch file last
// (finishRekey). A crash before the rename leaves the old spool as it was, and the recovery
// starts again at the next Open; a crash after it is finished by the next Open.
func (s *Spool) recoverEpoch(firsts []uint64, hasState bool, cause error) error {
	if err := s.stageRekey(firsts, hasState, cause); err != nil {
		return err
	}
	return s.finishRekey()
}

// stageRekey writes the re-keyed spool to rekey.done/ (see recoverEpoch).
func (s *Spool) stageRekey(firsts []uint64, hasState bool, cause error) error {
	var acked uint64
	if hasState {
		if f, err := os.Open(filepath.Join(s.dir, stateFile)); err == nil {
			if st, found, err := readState(f); err == nil && found {
				acked = st.acked
			}
			f.Close()
		}
	}
	epoch, err := newEpoch()
	if err != nil {
		return err
	}
	stage := filepath.Join(s.dir, rekeyStage)
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.Mkdir(stage, 0o700); err != nil {
		return fmt.Errorf("spool: %w", err)
	}

	var (
		n, lost   uint64
		previous  string
		out       *os.File
		w         *bufio.Writer
		outSize   int64
		buf       []byte
		closeSeg  func() error
		rekeyErrs int
	)
	closeSeg = func() error {
		if out == nil {
			return nil
		}
		err := w.Flush()
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		out = nil
		if err != nil {
			return fmt.Errorf("spool: re-key: %w", err)
		}
		return nil
	}
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	for i, first := range firsts {
		var limit uint64
		if i+1 < len(firsts) {
			limit = firsts[i+1]
		}
		buf, err = readFileInto(filepath.Join(s.dir, segName(first)), buf)
		if err != nil {
			return err
		}
		for _, r := range scanSegment(buf, first, limit).recs {
			if r.seq <= acked {
				continue
			}
			payload := buf[r.off+recHdrSize : r.off+recHdrSize+int64(r.n)]
			p, old, err := s.opts.Rekey(payload, epoch, n+1)
			if err == nil && len(p) > MaxPayload {
				err = ErrTooLarge
			}
			if err != nil {
				lost++
				if rekeyErrs++; rekeyErrs <= 10 {
					s.log.Warn("spool: a batch of the lost epoch cannot be re-keyed; dropped", "seq", r.seq, "err", err)
				}
				continue
			}
			if previous == "" && validEpoch(old) {
				previous = old
			}
			size := int64(recHdrSize + len(p))
			if out != nil && outSize+size > s.opts.SegmentSize {
				if err := closeSeg(); err != nil {
					return err
				}
			}
			if out == nil {
				name := segName(n + 1)
				if out, err = os.OpenFile(filepath.Join(stage, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
					return fmt.Errorf("spool: re-key: %w", err)
				}
				w = bufio.NewWriterSize(out, 64<<10)
				w.WriteString(segMagic)
				outSize = segHdrSize
			}
			n++
			if _, err := w.Write(appendRecord(nil, n, p)); err != nil {
				return fmt.Errorf("spool: re-key: %w", err)
			}
			outSize += size
		}
	}
	if err := closeSeg(); err != nil {
		return err
	}
	if previous == "" {
		previous = UnknownEpoch
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{stateFile, encodeSlot(state{})},
		{previousFile, []byte(previous + "\n")},
		{epochFile, []byte(epoch + "\n")},
	} {
		if err := writeFileAtomic(stage, f.name, f.data); err != nil {
			return err
		}
	}
	if err := os.Rename(stage, filepath.Join(s.dir, rekeyDone)); err != nil {
		return fmt.Errorf("spool: re-key: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	s.stats.EpochLost = true
	s.stats.Rekeyed += n
	s.stats.Lost += lost
	s.log.Warn("spool: the epoch file was lost; started a new epoch and re-keyed the spooled batches under it",
		"cause", cause, "previous_epoch", previous, "epoch", epoch, "rekeyed", n, "dropped", lost, "acknowledged_before", acked)
	return nil
}

// finishRekey moves a complete re-keyed spool (rekey.done/) into the directory, if there is
// one, and removes what an interrupted recovery left. Every step can be repeated after a
// crash.
func (s *Spool) finishRekey() error {
	if err := os.RemoveAll(filepath.Join(s.dir, rekeyStage)); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	done := filepath.Join(s.dir, rekeyDone)
	if _, err := os.Stat(done); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(done, epochFile)); errors.Is(err, fs.ErrNotExist) {
		// The epoch file, moved last, is in place: only the directory is left to remove.
		if err := os.RemoveAll(done); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		return syncDir(s.dir)
	}
	moving := filepath.Join(done, rekeyMoving)
	if _, err := os.Stat(moving); errors.Is(err, fs.ErrNotExist) {
		// Nothing moved yet: every segment in the directory is the old epoch's.
		entries, err := os.ReadDir(s.dir)
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		for _, e := range entries {
			if _, ok := parseSegName(e.Name()); ok && e.Type().IsRegular() {
				if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil {
					return fmt.Errorf("spool: %w", err)
				}
			}
		}
		if err := syncDir(s.dir); err != nil {
			return err
		}
		if err := writeFileAtomic(done, rekeyMoving, nil); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(done)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if _, ok := parseSegName(name); ok || name == stateFile || name == previousFile {
			if err := os.Rename(filepath.Join(done, name), filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
		}
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(done, epochFile), filepath.Join(s.dir, epochFile)); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	if err := os.RemoveAll(done); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return syncDir(s.dir)
}

// readPrevious reads the epoch the current one replaced ("" if none).
func readPrevious(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, previousFile))
	if err != nil {
		return ""
	}
	if e := strings.TrimSpace(string(b)); validEpoch(e) {
		return e
	}
	return UnknownEpoch
}
