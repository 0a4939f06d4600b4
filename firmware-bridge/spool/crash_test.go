//go:build unix

package spool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	crashDirEnv   = "SPOOL_CRASH_DIR"
	crashRoundEnv = "SPOOL_CRASH_ROUND"
	crashKills    = 20
)

// Small segments, so that the kills also land in segment rotation and reclamation.
var crashOpts = Options{SegmentSize: 4 << 10}

func crashPayloadSize(seq uint64) int { return 40 + int(seq*7919%1500) }

// TestCrashChild is the process TestCrash kills: it appends batches as fast as it can and, in
// a second goroutine, replays and acknowledges them out of order like the publisher. It prints
// "A seq" after each Append returns and "K seq" after each Ack returns.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("helper process of TestCrash")
	}
	round, err := strconv.ParseUint(os.Getenv(crashRoundEnv), 10, 64)
	if err != nil {
		fmt.Printf("E bad round: %v\n", err)
		os.Exit(2)
	}
	s, err := Open(dir, crashOpts)
	if err != nil {
		fmt.Printf("E open: %v\n", err)
		os.Exit(2)
	}
	go func() {
		rng := rand.New(rand.NewPCG(round, 7))
		var cursor uint64
		var window []uint64
		for range s.Notify() {
			for {
				recs, err := s.Pending(cursor, 32)
				if err != nil {
					fmt.Printf("E pending: %v\n", err)
					os.Exit(2)
				}
				if len(recs) == 0 {
					break
				}
				for _, r := range recs {
					window = append(window, r.Seq)
					cursor = r.Seq
				}
				rng.Shuffle(len(window), func(i, j int) { window[i], window[j] = window[j], window[i] })
				k := rng.IntN(len(window) + 1)
				for _, q := range window[:k] {
					if err := s.Ack(q); err != nil {
						fmt.Printf("E ack: %v\n", err)
						os.Exit(2)
					}
					fmt.Printf("K %d\n", q)
				}
				window = window[k:]
			}
		}
	}()
	for {
		seq, err := s.Append(func(seq uint64) ([]byte, error) {
			return payloadFor(seq, round, crashPayloadSize(seq)), nil
		})
		if err != nil {
			fmt.Printf("E append: %v\n", err)
			os.Exit(2)
		}
		fmt.Printf("A %d\n", seq)
	}
}

// TestCrash kills a process appending to the spool with SIGKILL at random moments, and checks
// after each kill that every batch it reported stored is there, intact, in a gapless sequence,
// and that no seq it reported is given again.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process 20 times")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	appended := map[uint64]uint64{} // seq → round, for every "A seq" printed
	acked := map[uint64]bool{}      // every "K seq" printed
	var (
		epoch      string
		lastSeq    uint64 // LastSeq at the previous reopen
		kills      int
		torn       int
		checked    int
		unreported int
		ackedMore  int
	)
	for round := uint64(1); round <= crashKills; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.FormatUint(round, 10))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 10 + rng.IntN(240) // lines
		sc := bufio.NewScanner(out)
		var first, prev uint64
		lines := 0
		for sc.Scan() {
			line := sc.Text()
			kind, num, _ := strings.Cut(line, " ")
			seq, err := strconv.ParseUint(num, 10, 64)
			switch {
			case kind == "E" || err != nil:
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: child: %q; stderr:\n%s", round, line, stderr.Bytes())
			case kind == "A":
				if r, dup := appended[seq]; dup {
					t.Fatalf("round %d: seq %d reported stored again (first in round %d)", round, seq, r)
				}
				if first == 0 {
					first = seq
					if seq != lastSeq+1 {
						t.Fatalf("round %d: first seq %d, last seq in the spool was %d", round, seq, lastSeq)
					}
				} else if seq != prev+1 {
					t.Fatalf("round %d: seq %d after %d", round, seq, prev)
				}
				prev = seq
				appended[seq] = round
			case kind == "K":
				acked[seq] = true
			}
			lines++
			if lines == killAfter {
				if rng.IntN(2) == 0 {
					time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
				}
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if lines < killAfter || cmd.ProcessState.ExitCode() != -1 {
			t.Fatalf("round %d: child ended by itself after %d lines (%v); stderr:\n%s",
				round, lines, cmd.ProcessState, stderr.Bytes())
		}
		kills++

		s, err := Open(dir, crashOpts)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		st := s.Stats()
		if epoch == "" {
			epoch = s.Epoch()
		} else if s.Epoch() != epoch {
			t.Fatalf("round %d: epoch %s, was %s", round, s.Epoch(), epoch)
		}
		if st.Lost != 0 || st.CorruptRegions != 0 || st.Quarantined != 0 || st.StateReset || st.Evicted != 0 {
			t.Fatalf("round %d: damage after a kill: %+v", round, st)
		}
		torn += st.TornTails
		recs, err := s.Pending(0, 1<<30)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		present := map[uint64]bool{}
		for i, r := range recs {
			if i == 0 && r.Seq != st.Acked+1 || i > 0 && r.Seq != recs[i-1].Seq+1 {
				t.Fatalf("round %d: gap before seq %d (acked through %d)", round, r.Seq, st.Acked)
			}
			if !checkPayload(r.Seq, r.Payload) {
				t.Fatalf("round %d: seq %d: corrupt payload", round, r.Seq)
			}
			tag := binary.LittleEndian.Uint64(r.Payload[8:16])
			if rr, ok := appended[r.Seq]; ok && rr != tag || tag > round {
				t.Fatalf("round %d: seq %d holds the batch of round %d", round, r.Seq, tag)
			}
			present[r.Seq] = true
		}
		if len(recs) > 0 && recs[len(recs)-1].Seq != st.LastSeq || len(recs) != st.Depth {
			t.Fatalf("round %d: %d pending up to %d, Stats %+v", round, len(recs), recs[len(recs)-1].Seq, st)
		}
		// The batch being appended at the kill may be stored without having been reported.
		if prev > st.LastSeq || st.LastSeq > max(prev, lastSeq)+1 {
			t.Fatalf("round %d: last reported %d, LastSeq %d", round, prev, st.LastSeq)
		}
		if st.LastSeq > max(prev, lastSeq) {
			unreported++
		}
		// Every batch reported stored and not reported acknowledged is pending, except at most
		// one whose Ack returned just before the kill.
		missing := 0
		for q := range appended {
			if !acked[q] && !present[q] {
				if q > st.Acked {
					t.Fatalf("round %d: seq %d reported stored is missing (acked through %d)", round, q, st.Acked)
				}
				missing++
			}
		}
		if missing > 1 {
			t.Fatalf("round %d: %d reported batches missing", round, missing)
		}
		ackedMore += missing
		checked += len(recs)
		lastSeq = st.LastSeq
		for q := range appended {
			if acked[q] || !present[q] && q <= st.Acked {
				// Settled: forget it, so that the next rounds check less.
				delete(appended, q)
				delete(acked, q)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if kills != crashKills {
		t.Fatalf("%d kills, want %d", kills, crashKills)
	}
	if lastSeq < crashKills {
		t.Fatalf("only %d batches appended in %d rounds", lastSeq, crashKills)
	}
	t.Logf("%d kills, %d batches appended, %d pending batches checked after the kills, %d torn tails truncated, "+
		"%d stored but unreported at the kill, %d acked but unreported", kills, lastSeq, checked, torn, unreported, ackedMore)
}
