package spool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Errors returned by the spool.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("spool: closed")
	// ErrLocked is returned by Open when another Spool has the directory open.
	ErrLocked = errors.New("spool: directory in use by another spool")
	// ErrTooLarge is returned by Append for a payload over MaxPayload or Options.MaxBytes.
	ErrTooLarge = errors.New("spool: payload too large")
	// ErrBadEpoch is returned by Open without Options.Rekey when the directory holds spool data
	// but its epoch file is missing or unreadable: the seqs on disk would belong to no epoch.
	// With Options.Rekey, Open recovers instead.
	ErrBadEpoch = errors.New("spool: missing or invalid epoch file")
)

// Defaults of Options.
const (
	DefaultSegmentSize = 4 << 20
	DefaultMaxBytes    = 512 << 20
)

// Options configures a Spool. The zero value selects every default.
type Options struct {
	// SegmentSize is the size at which a segment file is closed and a new one started
	// (DefaultSegmentSize if zero). A record larger than it gets a segment of its own.
	SegmentSize int64
	// MaxBytes bounds the total size of the segment files (DefaultMaxBytes if zero); the
	// oldest segments are evicted to stay under it.
	MaxBytes int64
	// SyncEvery is how many appends share one fsync (1 if zero): 1 makes every Append
	// durable before it returns; see the package documentation for larger values.
	SyncEvery int
	// Logger receives warnings about torn tails, damage and evictions (none if nil).
	Logger *slog.Logger
	// Rekey, when set, lets Open recover a directory whose epoch file is missing or damaged:
	// instead of failing with ErrBadEpoch, Open starts a new epoch and passes every
	// unacknowledged batch to Rekey with its seq in the new epoch (from 1, in the old order),
	// storing what Rekey returns; Stats.EpochLost, Rekeyed and PreviousEpoch tell what happened.
	Rekey Rekeyer
}

// Record is one stored batch.
type Record struct {
	Seq     uint64
	Payload []byte
}

// Stats describes a Spool.
type Stats struct {
	Epoch    string
	LastSeq  uint64 // the highest seq stored (or reserved, see the package documentation)
	Acked    uint64 // every seq up to Acked is acknowledged, evicted or lost
	Depth    int    // batches stored and not acknowledged
	Bytes    int64  // size of the segment files
	Segments int    // number of segment files
	Evicted  uint64 // batches evicted unacknowledged, ever (persisted)

	// Counted since Open.
	Lost           uint64 // seqs found unreadable, by Open (below LastSeq and above Acked) or by Pending
	TornTails      int    // torn tails truncated by Open
	TruncatedBytes int64  // bytes cut off by those truncations
	CorruptRegions int    // damaged byte ranges found by Open
	Quarantined    int    // damaged segment files moved to quarantine/
	StateReset     bool   // the state file was damaged: acknowledgements were forgotten
	EpochLost      bool   // the epoch file was missing or damaged: a new epoch was started
	Rekeyed        uint64 // batches of the lost epoch stored again under the new one

	// PreviousEpoch is the epoch this one replaced when the spool lost its epoch file (kept
	// for the epoch's life), UnknownEpoch when no stored batch told it, "" when the epoch was
	// created fresh.
	PreviousEpoch string
}

// A Spool is an open spool directory. Its methods may be called from several goroutines; one
// Append runs at a time.
type Spool struct {
	dir   string
	opts  Options
	log   *slog.Logger
	epoch string
	lockf *os.File
	stf   *os.File // the state file
	ready chan struct{}

	appendMu sync.Mutex // serialises Append, held while its build function runs

	mu         sync.Mutex // guards everything below
	closed     bool
	segs       []*segment // in seq order
	active     *segment   // the segment appended to, or nil to start a new one
	last       uint64     // highest seq stored or reserved
	synced     uint64     // every record up to synced is durable
	unsynced   int        // records appended since the last fsync of the active segment
	st         state
	stDirty    bool // st differs from what the state file holds
	stUnsynced bool // the state file was written since its last fsync
	depth      int
	bytes      int64
	stats      Stats
	buf        []byte // encoding buffer reused by Append
}

// segment is one segment file and the index of its verified records.
type segment struct {
	first   uint64 // seq in its name
	path    string
	f       *os.File // opened lazily for reading; read-write for the active segment
	size    int64
	recs    []recEntry
	head    int  // recs[:head] are all done
	damaged bool // found damaged: never appended to, quarantined when reclaimed
}

// next returns the seq the segment's next record would carry.
func (g *segment) next() uint64 {
	if len(g.recs) == 0 {
		return g.first
	}
	return g.recs[len(g.recs)-1].seq + 1
}

// Open opens the spool in dir, creating the directory and a new epoch if it holds no spool,
// and recovers it after a crash (see the package documentation).
func Open(dir string, opts Options) (*Spool, error) {
	switch {
	case opts.SegmentSize < 0:
		return nil, fmt.Errorf("spool: negative SegmentSize %d", opts.SegmentSize)
	case opts.MaxBytes < 0:
		return nil, fmt.Errorf("spool: negative MaxBytes %d", opts.MaxBytes)
	case opts.SyncEvery < 0:
		return nil, fmt.Errorf("spool: negative SyncEvery %d", opts.SyncEvery)
	}
	if opts.SegmentSize == 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.SyncEvery == 0 {
		opts.SyncEvery = 1
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	_, err := os.Stat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if created {
		if err := syncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, err
		}
	}
	lockf, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if err := lockDir(lockf); err != nil {
		lockf.Close()
		return nil, err
	}
	s := &Spool{
		dir:   dir,
		opts:  opts,
		log:   log.With("spool", dir),
		lockf: lockf,
		ready: make(chan struct{}, 1),
	}
	if err := s.load(); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// load reads the directory: epoch, state and segments.
func (s *Spool) load() error {
	if err := s.finishRekey(); err != nil {
		return err
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	var firsts []uint64 // sorted: ReadDir sorts by name and the names have a fixed width
	hasState := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, tmpExt):
			// Left by an interrupted writeFileAtomic.
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
		case name == stateFile:
			hasState = true
		case e.Type().IsRegular():
			if first, ok := parseSegName(name); ok {
				firsts = append(firsts, first)
			}
		}
	}

	s.epoch, err = readEpoch(s.dir)
	if s.opts.Rekey != nil && (errors.Is(err, ErrBadEpoch) || (errors.Is(err, fs.ErrNotExist) && (len(firsts) > 0 || hasState))) {
		// The batches on disk belong to an epoch nobody can name any more: keep them under a
		// new one, then read the directory again.
		if err := s.recoverEpoch(firsts, hasState, err); err != nil {
			return err
		}
		return s.load()
	}
	if errors.Is(err, fs.ErrNotExist) {
		if len(firsts) > 0 || hasState {
			return fmt.Errorf("spool: %s holds spool data but no epoch file: %w", s.dir, ErrBadEpoch)
		}
		if s.epoch, err = newEpoch(); err != nil {
			return err
		}
		// A fresh epoch replaces nothing: forget what an earlier recovery recorded.
		if err := os.Remove(filepath.Join(s.dir, previousFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("spool: %w", err)
		}
		if err := writeFileAtomic(s.dir, epochFile, []byte(s.epoch+"\n")); err != nil {
			return err
		}
		s.log.Info("spool: new epoch", "epoch", s.epoch)
	} else if err != nil {
		return err
	}
	s.stats.Epoch = s.epoch
	s.stats.PreviousEpoch = readPrevious(s.dir)

	s.stf, err = os.OpenFile(filepath.Join(s.dir, stateFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	st, found, err := readState(s.stf)
	if err != nil {
		return err
	}
	if !found {
		if hasState {
			s.stats.StateReset = true
			s.log.Warn("spool: state file damaged; acknowledged batches will be sent again and the evicted count restarts")
		}
		if err := writeState(s.stf, st, true); err != nil {
			return err
		}
		if !hasState {
			if err := syncDir(s.dir); err != nil {
				return err
			}
		}
	}
	s.st = st

	var reserved uint64 // seqs an unreadable tail of the last segment may have held
	var buf []byte
	for i, first := range firsts {
		var limit uint64
		isLast := i == len(firsts)-1
		if !isLast {
			limit = firsts[i+1]
		}
		path := filepath.Join(s.dir, segName(first))
		buf, err = readFileInto(path, buf)
		if err != nil {
			return err
		}
		sc := scanSegment(buf, first, limit)
		seg := &segment{first: first, path: path, size: int64(len(buf)), recs: sc.recs}
		switch {
		case len(sc.bad) == 0 && sc.magicOK:
			// Intact.
		case isLast && len(sc.recs) == 0 && strings.HasPrefix(segMagic, string(buf)):
			// Created, but its header never made it to disk: nothing was ever stored in it.
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
			s.stats.TornTails++
			s.stats.TruncatedBytes += int64(len(buf))
			s.log.Warn("spool: removed torn segment", "segment", path)
			continue
		case isLast && sc.magicOK && len(sc.bad) == 1 && sc.bad[0].end == int64(len(buf)):
			// A torn write at the end of the last segment.
			at := sc.bad[0].start
			if err := s.truncate(seg, at); err != nil {
				return err
			}
			s.stats.TornTails++
			s.stats.TruncatedBytes += int64(len(buf)) - at
			s.log.Warn("spool: truncated torn tail", "segment", path, "offset", at, "bytes", int64(len(buf))-at)
		default:
			s.stats.CorruptRegions += len(sc.bad)
			for _, r := range sc.bad {
				s.log.Error("spool: damaged segment", "segment", path, "from", r.start, "to", r.end)
			}
			if isLast && len(sc.bad) > 0 {
				if tail := sc.bad[len(sc.bad)-1]; tail.end == int64(len(buf)) {
					reserved = sc.next - 1 + uint64(tail.end-tail.start)/recHdrSize
				}
			}
			if len(sc.recs) == 0 {
				if err := s.quarantine(seg); err != nil {
					return err
				}
				continue
			}
			seg.damaged = true
		}
		s.segs = append(s.segs, seg)
		s.bytes += seg.size
	}

	s.last = max(st.acked, reserved)
	for _, seg := range s.segs {
		s.last = max(s.last, seg.next()-1)
		for i := range seg.recs {
			if seg.recs[i].seq <= st.acked {
				seg.recs[i].done = true
			} else {
				s.depth++
			}
		}
	}
	s.synced = s.last
	if len(firsts) > 0 {
		// Count the seqs that should be in the spool but cannot be read. (Below the first
		// segment there may be seqs acknowledged just before a power cut took the state
		// file's last write: those are not lost.)
		prev := max(st.acked, firsts[0]-1)
		for _, seg := range s.segs {
			for _, r := range seg.recs {
				if r.seq > prev {
					s.stats.Lost += r.seq - prev - 1
					prev = r.seq
				}
			}
		}
		if s.last > prev {
			s.stats.Lost += s.last - prev
		}
	}

	if n := len(s.segs); n > 0 {
		if seg := s.segs[n-1]; !seg.damaged && seg.next() == s.last+1 {
			if seg.f == nil {
				f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
				if err != nil {
					return fmt.Errorf("spool: %w", err)
				}
				seg.f = f
			}
			s.active = seg
		}
	}
	s.advance()
	if err := s.reclaim(); err != nil {
		return err
	}
	if s.depth > 0 {
		s.ready <- struct{}{}
	}
	return s.saveState(true)
}

// readFileInto reads the file at path into buf, reallocating it if it is too small.
func readFileInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf, fmt.Errorf("spool: %w", err)
	}
	if int64(cap(buf)) < fi.Size() {
		buf = make([]byte, fi.Size())
	}
	buf = buf[:fi.Size()]
	if _, err := io.ReadFull(f, buf); err != nil {
		return buf, fmt.Errorf("spool: read %s: %w", path, err)
	}
	return buf, nil
}

// truncate cuts the segment file at size and makes that durable; the file stays open.
func (s *Spool) truncate(seg *segment, size int64) error {
	f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return fmt.Errorf("spool: truncate torn tail: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("spool: truncate torn tail: %w", err)
	}
	seg.f = f
	seg.size = size
	return nil
}

// Epoch returns the spool's epoch id.
func (s *Spool) Epoch() string { return s.epoch }

// Append stores one batch. It calls build with the batch's seq (one above the last seq
// stored) and stores the payload build returns; if build fails, nothing is stored and the seq
// is given to the next call again. With the default Options.SyncEvery, the batch is durable
// when Append returns. build runs without blocking Pending and Ack.
func (s *Spool) Append(build func(seq uint64) ([]byte, error)) (uint64, error) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	seq := s.last + 1 // no other Append can change it while appendMu is held
	s.mu.Unlock()

	payload, err := build(seq)
	if err != nil {
		return 0, fmt.Errorf("spool: build batch %d: %w", seq, err)
	}
	if len(payload) > MaxPayload || int64(segHdrSize+recHdrSize+len(payload)) > s.opts.MaxBytes {
		return 0, fmt.Errorf("spool: batch %d is %d bytes: %w", seq, len(payload), ErrTooLarge)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	if err := s.write(seq, payload); err != nil {
		return 0, err
	}
	return seq, nil
}

// mustRotate reports whether a record of size n with the given seq needs a new segment.
func (s *Spool) mustRotate(seq uint64, n int64) bool {
	a := s.active
	return a == nil || a.next() != seq || (len(a.recs) > 0 && a.size+n > s.opts.SegmentSize)
}

// write stores the record; seq is s.last+1.
func (s *Spool) write(seq uint64, payload []byte) error {
	n := int64(recHdrSize + len(payload))
	for {
		need := n
		if s.mustRotate(seq, n) {
			need += segHdrSize
		}
		if s.bytes+need <= s.opts.MaxBytes || len(s.segs) == 0 {
			break
		}
		if err := s.evictOldest(); err != nil {
			return err
		}
	}
	if s.mustRotate(seq, n) {
		if err := s.seal(); err != nil {
			return err
		}
		seg, err := s.createSegment(seq)
		if err != nil {
			return err
		}
		s.segs = append(s.segs, seg)
		s.active = seg
		s.bytes += seg.size
	}

	seg := s.active
	off := seg.size
	s.buf = appendRecord(s.buf[:0], seq, payload)
	if _, err := seg.f.WriteAt(s.buf, off); err != nil {
		return s.abandon(seg, off, fmt.Errorf("spool: write batch %d: %w", seq, err))
	}
	sync := s.unsynced+1 >= s.opts.SyncEvery
	if sync {
		if err := seg.f.Sync(); err != nil {
			return s.abandon(seg, off, fmt.Errorf("spool: sync batch %d: %w", seq, err))
		}
	}
	seg.recs = append(seg.recs, recEntry{seq: seq, off: off, n: uint32(len(payload))})
	seg.size += n
	s.bytes += n
	s.last = seq
	s.depth++
	if sync {
		s.markSynced()
	} else {
		s.unsynced++
	}
	return nil
}

// abandon handles a failed write or fsync of a record at offset off of the active segment: it
// cuts the file back to off (if it can: else the segment is damaged) and stops appending to the
// segment, whose state on disk is no longer known. The next Append starts a new segment.
func (s *Spool) abandon(seg *segment, off int64, err error) error {
	if terr := seg.f.Truncate(off); terr != nil {
		seg.damaged = true
	}
	s.active = nil
	if len(seg.recs) == 0 {
		// Nothing stored in it: remove it, as the next segment will have its name.
		s.segs = s.segs[:len(s.segs)-1]
		s.bytes -= seg.size
		seg.f.Close()
		seg.f = nil
		if rerr := os.Remove(seg.path); rerr != nil {
			err = errors.Join(err, fmt.Errorf("spool: %w", rerr))
		}
	}
	return err
}

// markSynced records that everything appended is durable and wakes the publisher.
func (s *Spool) markSynced() {
	s.unsynced = 0
	if s.synced != s.last {
		s.synced = s.last
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
}

// seal stops appending to the active segment: it makes its records durable (so that no
// segment but the last can end in a torn write) or, if it holds none, removes it.
func (s *Spool) seal() error {
	seg := s.active
	if seg == nil {
		return nil
	}
	if len(seg.recs) == 0 {
		s.active = nil
		s.segs = s.segs[:len(s.segs)-1]
		s.bytes -= seg.size
		if err := seg.f.Close(); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		seg.f = nil
		if err := os.Remove(seg.path); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		return nil
	}
	if s.unsynced > 0 {
		if err := seg.f.Sync(); err != nil {
			return fmt.Errorf("spool: sync %s: %w", seg.path, err)
		}
		s.markSynced()
	}
	s.active = nil
	return s.reclaim()
}

// createSegment creates the segment file for records from seq first on and makes it durable.
func (s *Spool) createSegment(first uint64) (*segment, error) {
	path := filepath.Join(s.dir, segName(first))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: create segment: %w", err)
	}
	err = func() error {
		if _, err := f.Write([]byte(segMagic)); err != nil {
			return fmt.Errorf("spool: create segment: %w", err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("spool: create segment: %w", err)
		}
		return syncDir(s.dir)
	}()
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &segment{first: first, path: path, f: f, size: segHdrSize}, nil
}

// evictOldest deletes the oldest segment, acknowledged or not.
func (s *Spool) evictOldest() error {
	seg := s.segs[0]
	var n uint64
	for i := seg.head; i < len(seg.recs); i++ {
		if !seg.recs[i].done {
			seg.recs[i].done = true
			n++
		}
	}
	seg.head = len(seg.recs)
	s.depth -= int(n)
	s.segs = s.segs[1:]
	if seg == s.active {
		s.active = nil
		s.markSynced()
	}
	if n > 0 {
		s.st.evicted += n
		s.stDirty = true
		s.log.Warn("spool: full, evicted unacknowledged batches",
			"count", n, "first", seg.first, "last", seg.next()-1, "evicted_total", s.st.evicted)
	}
	s.advance()
	if err := s.saveState(true); err != nil {
		return err
	}
	return s.drop(seg)
}

// advance moves the acknowledged seq up to the seq before the first record not done.
func (s *Spool) advance() {
	acked := s.last
	for _, seg := range s.segs {
		for seg.head < len(seg.recs) && seg.recs[seg.head].done {
			seg.head++
		}
		if seg.head < len(seg.recs) {
			acked = seg.recs[seg.head].seq - 1
			break
		}
	}
	if acked > s.st.acked {
		s.st.acked = acked
		s.stDirty = true
	}
}

// reclaim deletes the oldest segments while all their records are done, except the active
// segment (whose name keeps the next seq known even without the state file).
func (s *Spool) reclaim() error {
	for len(s.segs) > 0 {
		seg := s.segs[0]
		if seg == s.active || seg.head < len(seg.recs) {
			return nil
		}
		// The state file must say these seqs are done before they disappear.
		if err := s.saveState(true); err != nil {
			return err
		}
		s.segs = s.segs[1:]
		if err := s.drop(seg); err != nil {
			return err
		}
	}
	return nil
}

// drop deletes a segment that left s.segs, or quarantines it if it is damaged. The removal
// need not be durable: a segment that comes back after a power cut holds only seqs at or
// below the acknowledged seq, and Open reclaims it again.
func (s *Spool) drop(seg *segment) error {
	s.bytes -= seg.size
	if seg.f != nil {
		seg.f.Close()
		seg.f = nil
	}
	if seg.damaged {
		return s.quarantine(seg)
	}
	if err := os.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// quarantine moves a damaged segment file into quarantine/, keeping the newest
// maxQuarantined files there.
func (s *Spool) quarantine(seg *segment) error {
	if seg.f != nil {
		seg.f.Close()
		seg.f = nil
	}
	qdir := filepath.Join(s.dir, quarantineDir)
	if err := os.MkdirAll(qdir, 0o700); err != nil {
		return fmt.Errorf("spool: quarantine: %w", err)
	}
	if err := os.Rename(seg.path, filepath.Join(qdir, filepath.Base(seg.path))); err != nil {
		return fmt.Errorf("spool: quarantine: %w", err)
	}
	s.stats.Quarantined++
	s.log.Warn("spool: damaged segment moved to quarantine", "segment", seg.path)
	entries, err := os.ReadDir(qdir)
	if err != nil {
		return fmt.Errorf("spool: quarantine: %w", err)
	}
	for i := 0; i < len(entries)-maxQuarantined; i++ {
		if err := os.Remove(filepath.Join(qdir, entries[i].Name())); err != nil {
			return fmt.Errorf("spool: quarantine: %w", err)
		}
	}
	return syncDir(s.dir)
}

// saveState writes the state if it changed, and fsyncs it if sync is set.
func (s *Spool) saveState(sync bool) error {
	if s.stDirty {
		s.st.gen++
		if err := writeState(s.stf, s.st, false); err != nil {
			return err
		}
		s.stDirty = false
		s.stUnsynced = true
	}
	if sync && s.stUnsynced {
		if err := s.stf.Sync(); err != nil {
			return fmt.Errorf("spool: sync state: %w", err)
		}
		s.stUnsynced = false
	}
	return nil
}

// Sync makes every appended batch durable (only needed with Options.SyncEvery > 1).
func (s *Spool) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.syncLocked()
}

func (s *Spool) syncLocked() error {
	if s.unsynced == 0 || s.active == nil {
		return nil
	}
	if err := s.active.f.Sync(); err != nil {
		return fmt.Errorf("spool: sync %s: %w", s.active.path, err)
	}
	s.markSynced()
	return nil
}

// Notify returns a channel that receives a value when batches become available to Pending.
// It has a buffer of one and is never closed; it is meant for the one publisher goroutine.
func (s *Spool) Notify() <-chan struct{} { return s.ready }

// Pending returns up to n durable, unacknowledged batches with seqs above after, in seq order.
// A publisher passes the last seq it has sent, or 0 to replay everything not acknowledged. A
// batch that no longer verifies is skipped and counted in Stats.Lost.
func (s *Spool) Pending(after uint64, n int) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	var out []Record
	lost := false
	i := max(sort.Search(len(s.segs), func(i int) bool { return s.segs[i].first > after })-1, 0)
outer:
	for ; i < len(s.segs) && len(out) < n; i++ {
		seg := s.segs[i]
		j := sort.Search(len(seg.recs), func(j int) bool { return seg.recs[j].seq > after })
		for ; j < len(seg.recs) && len(out) < n; j++ {
			r := &seg.recs[j]
			if r.seq > s.synced {
				break outer
			}
			if r.done {
				continue
			}
			p, err := s.read(seg, r)
			if errors.Is(err, errDamaged) {
				s.log.Error("spool: batch damaged on disk, skipped", "segment", seg.path, "seq", r.seq)
				r.done = true
				s.depth--
				s.stats.Lost++
				seg.damaged = true
				lost = true
				continue
			}
			if err != nil {
				return out, err
			}
			out = append(out, Record{Seq: r.seq, Payload: p})
		}
	}
	if lost {
		s.advance()
		if err := s.saveState(false); err != nil {
			return out, err
		}
		if err := s.reclaim(); err != nil {
			return out, err
		}
	}
	return out, nil
}

var errDamaged = errors.New("spool: record damaged")

// read reads back and checks one record.
func (s *Spool) read(seg *segment, r *recEntry) ([]byte, error) {
	if seg.f == nil {
		f, err := os.Open(seg.path)
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		seg.f = f
	}
	b := make([]byte, recHdrSize+int(r.n))
	if _, err := seg.f.ReadAt(b, r.off); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errDamaged // the file was cut short
		}
		return nil, fmt.Errorf("spool: read batch %d: %w", r.seq, err)
	}
	if _, n, ok := parseRecord(b, 0, r.seq, r.seq+1); !ok || n != int(r.n) {
		return nil, errDamaged
	}
	return b[recHdrSize:], nil
}

// Ack marks the batch seq as delivered. Acks may come in any order; seqs already acknowledged,
// evicted or lost are ignored. Storage is reclaimed once every batch of a segment is acknowledged
// and so are all before it.
func (s *Spool) Ack(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if seq > s.last {
		return fmt.Errorf("spool: ack of seq %d, above the last seq %d", seq, s.last)
	}
	if seq <= s.st.acked {
		return nil
	}
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].first > seq }) - 1
	if i < 0 {
		return nil
	}
	seg := s.segs[i]
	j := sort.Search(len(seg.recs), func(j int) bool { return seg.recs[j].seq >= seq })
	if j == len(seg.recs) || seg.recs[j].seq != seq || seg.recs[j].done {
		return nil
	}
	seg.recs[j].done = true
	s.depth--
	s.advance()
	if err := s.saveState(false); err != nil {
		return err
	}
	return s.reclaim()
}

// LastSeq returns the highest seq stored: the seq of the last batch appended, after a restart
// too. It is 0 in a new epoch.
func (s *Spool) LastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Depth returns the number of batches stored and not acknowledged.
func (s *Spool) Depth() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.depth
}

// Bytes returns the total size of the segment files.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Evicted returns how many batches were ever evicted unacknowledged to keep the spool under
// Options.MaxBytes. The count is persisted.
func (s *Spool) Evicted() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.evicted
}

// Stats returns the spool's counters.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.LastSeq = s.last
	st.Acked = s.st.acked
	st.Depth = s.depth
	st.Bytes = s.bytes
	st.Segments = len(s.segs)
	st.Evicted = s.st.evicted
	return st
}

// Close makes every appended batch and acknowledgement durable and releases the directory.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	err := errors.Join(s.syncLocked(), s.saveState(true))
	return errors.Join(err, s.closeFiles())
}

// closeFiles closes every file, releasing the lock last.
func (s *Spool) closeFiles() error {
	var errs []error
	for _, seg := range s.segs {
		if seg.f != nil {
			errs = append(errs, seg.f.Close())
			seg.f = nil
		}
	}
	if s.stf != nil {
		errs = append(errs, s.stf.Close())
	}
	errs = append(errs, s.lockf.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("spool: close: %w", err)
	}
	return nil
}
