package spool

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

const (
	epochFile      = "epoch"
	stateFile      = "state"
	lockFile       = "LOCK"
	quarantineDir  = "quarantine"
	tmpExt         = ".tmp"
	stateMagic     = "TZS1"
	stateSlotSize  = 32
	maxQuarantined = 8
	maxEpochLen    = 64
)

// newEpoch returns a new random epoch id: "e-" and 12 hexadecimal digits.
func newEpoch() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("spool: new epoch: %w", err)
	}
	return "e-" + hex.EncodeToString(b[:]), nil
}

// validEpoch reports whether e can be an epoch id: 1 to 64 letters, digits, '-' or '_'
// (what the bridge writes is always "e-" and 12 hexadecimal digits).
func validEpoch(e string) bool {
	if e == "" || len(e) > maxEpochLen {
		return false
	}
	for _, c := range []byte(e) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// readEpoch reads the epoch file of dir. It returns an error wrapping fs.ErrNotExist if there is
// none.
func readEpoch(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, epochFile))
	if err != nil {
		return "", fmt.Errorf("spool: read epoch: %w", err)
	}
	e := strings.TrimSuffix(string(b), "\n")
	if !validEpoch(e) {
		return "", fmt.Errorf("spool: %s: %q: %w", filepath.Join(dir, epochFile), b, ErrBadEpoch)
	}
	return e, nil
}

// writeFileAtomic replaces dir/name with data: it writes a temporary file, fsyncs it, renames
// it over name and fsyncs dir, so that after a crash the file is either old or new, whole.
func writeFileAtomic(dir, name string, data []byte) (err error) {
	path := filepath.Join(dir, name)
	tmp := path + tmpExt
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("spool: write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("spool: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("spool: sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("spool: close %s: %w", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("spool: write %s: %w", name, err)
	}
	return syncDir(dir)
}

// syncDir fsyncs the directory dir, making the creation, renaming and removal of its entries
// durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for fsync there; the bridge runs on Linux
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("spool: sync directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spool: sync directory %s: %w", dir, err)
	}
	return nil
}

// state is what the state file holds.
type state struct {
	gen     uint64 // generation of the slot it was read from or last written to
	acked   uint64 // every seq up to acked is acknowledged, evicted or lost
	evicted uint64 // batches evicted unacknowledged, ever
}

// encodeSlot encodes st as one state slot.
func encodeSlot(st state) []byte {
	b := make([]byte, stateSlotSize)
	copy(b[4:8], stateMagic)
	binary.LittleEndian.PutUint64(b[8:16], st.gen)
	binary.LittleEndian.PutUint64(b[16:24], st.acked)
	binary.LittleEndian.PutUint64(b[24:32], st.evicted)
	binary.LittleEndian.PutUint32(b[0:4], crc32.Checksum(b[4:], castagnoli))
	return b
}

// decodeSlot decodes a state slot; ok is false if it is damaged or was never written.
func decodeSlot(b []byte) (st state, ok bool) {
	if len(b) < stateSlotSize || string(b[4:8]) != stateMagic ||
		crc32.Checksum(b[4:stateSlotSize], castagnoli) != binary.LittleEndian.Uint32(b[0:4]) {
		return state{}, false
	}
	return state{
		gen:     binary.LittleEndian.Uint64(b[8:16]),
		acked:   binary.LittleEndian.Uint64(b[16:24]),
		evicted: binary.LittleEndian.Uint64(b[24:32]),
	}, true
}

// readState returns the newest valid slot of the state file f; found is false if neither slot
// is valid.
func readState(f *os.File) (st state, found bool, err error) {
	b := make([]byte, 2*stateSlotSize)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return state{}, false, fmt.Errorf("spool: read state: %w", err)
	}
	b = b[:n]
	for i := range 2 {
		if len(b) < (i+1)*stateSlotSize {
			break
		}
		if s, ok := decodeSlot(b[i*stateSlotSize:]); ok && (!found || s.gen > st.gen) {
			st, found = s, true
		}
	}
	return st, found, nil
}

// writeState writes st to the slot its generation selects, leaving the other slot (the
// previous generation) intact, and fsyncs f if sync is set.
func writeState(f *os.File, st state, sync bool) error {
	if _, err := f.WriteAt(encodeSlot(st), int64(st.gen%2)*stateSlotSize); err != nil {
		return fmt.Errorf("spool: write state: %w", err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("spool: sync state: %w", err)
		}
	}
	return nil
}
