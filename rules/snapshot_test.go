package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// TestSnapshotRoundTrip drains the benchmark fleet for ten minutes (episodes of every kind the
// fleet makes open and close, sound windows fill, detectors hold pending evidence) and checks,
// for every snapshot, that the vehicle it restores is the vehicle that was snapshotted: the
// JSON form (the snapshot format before the binary one, which names every field) of both is
// the same, and the restored vehicle snapshots to the same bytes. The JSON form restores the
// same vehicle too: snapshots written before the binary form stay readable.
func TestSnapshotRoundTrip(t *testing.T) {
	set, loops := benchTown(t, 1000)
	fleet := newBenchFleet(loops)
	e := newBenchEngine(set, fleet)
	checked, pending, episodes := 0, 0, 0
	for range 120 {
		round := fleet.round()
		recv := round[0].SentAt.Add(300 * time.Millisecond)
		e.Tick(recv)
		for _, bt := range round {
			e.Apply(bt, recv)
		}
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		for id, snap := range c.Snapshots {
			v := e.vehicles[id]
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var got Vehicle
			if err := unmarshalSnapshot(snap, &got); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if b, _ := json.Marshal(&got); !bytes.Equal(b, want) {
				t.Fatalf("%s: restored\n%s\nsnapshotted\n%s", id, b, want)
			}
			if again, err := marshalSnapshot(&got, nil); err != nil || !bytes.Equal(again, snap) {
				t.Fatalf("%s: the restored vehicle snapshots differently (%v)", id, err)
			}
			var old Vehicle
			if err := unmarshalSnapshot(want, &old); err != nil {
				t.Fatalf("%s: JSON snapshot: %v", id, err)
			}
			if b, _ := marshalSnapshot(&old, nil); !bytes.Equal(b, snap) {
				t.Fatalf("%s: the vehicle of the JSON snapshot snapshots differently", id)
			}
			for _, d := range v.Detectors {
				pending += len(d.Pending)
			}
			episodes += len(v.Episodes)
			checked++
		}
	}
	if pending == 0 || episodes == 0 {
		t.Fatalf("the fleet never had pending evidence (%d) or episodes (%d): the test checks too little", pending, episodes)
	}
	t.Logf("%d snapshots checked (%d pending readings, %d episodes in them)", checked, pending, episodes)
}

// TestRestoreContinuesAlike restarts the engine in the middle of the fleet's ten minutes, once
// from binary snapshots and once from the JSON form, and checks that both go on to drain
// exactly what the engine that never stopped drains: episodes, evidence and events.
func TestRestoreContinuesAlike(t *testing.T) {
	set, loops := benchTown(t, 1000)
	fleet := newBenchFleet(loops)
	live := newBenchEngine(set, fleet)
	var rounds [][]*wire.Batch
	for range 120 {
		rounds = append(rounds, fleet.round())
	}
	run := func(e *Engine, rs [][]*wire.Batch) []byte {
		var out []byte
		for _, round := range rs {
			recv := round[0].SentAt.Add(300 * time.Millisecond)
			e.Tick(recv)
			for _, bt := range round {
				e.Apply(bt, recv)
			}
			c, err := e.Drain()
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(c.Episodes, func(a, b Episode) int { return strings.Compare(a.ID, b.ID) })
			b, err := json.Marshal(struct {
				Episodes []Episode
				Evidence map[string][]Evidence
				Events   []Event
			}{c.Episodes, c.Evidence, c.Events})
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, b...), '\n')
		}
		return out
	}
	run(live, rounds[:60])
	var binary, jsonSnaps [][]byte
	for _, v := range live.vehicles {
		b, err := marshalSnapshot(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		binary, jsonSnaps = append(binary, b), append(jsonSnaps, j)
	}
	want := run(live, rounds[60:])
	for name, snaps := range map[string][][]byte{"binary": binary, "json": jsonSnaps} {
		e := New(live.profile, set)
		for _, s := range snaps {
			if err := e.Restore(s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if got := run(e, rounds[60:]); !bytes.Equal(got, want) {
			t.Errorf("restored from %s snapshots, the engine drains other changes than the one that never stopped", name)
		}
	}
	if !bytes.Contains(want, []byte(`"kind":"open"`)) {
		t.Fatal("no episode opened after the restart: the test checks too little")
	}
}

// TestSnapshotUnchangedNotWritten: a vehicle marked changed whose snapshot is the one drained
// last is not in the next Changes.
func TestSnapshotUnchangedNotWritten(t *testing.T) {
	e := New(profile.Piuma(), nil)
	st := &wire.Status{Online: true}
	e.SetStatus("PIU-001", st, noon)
	c, err := e.Drain()
	if err != nil || len(c.Snapshots) != 1 {
		t.Fatalf("first status: %d snapshots, %v", len(c.Snapshots), err)
	}
	e.SetStatus("PIU-001", &wire.Status{Online: true}, noon.Add(time.Second))
	if c, _ := e.Drain(); len(c.Snapshots) != 0 {
		t.Errorf("the same status again: %d snapshots, want 0", len(c.Snapshots))
	}
	e.SetStatus("PIU-001", &wire.Status{Online: false}, noon.Add(2*time.Second))
	if c, _ := e.Drain(); len(c.Snapshots) != 1 {
		t.Errorf("another status: %d snapshots, want 1", len(c.Snapshots))
	}
}

// TestSnapshotCodecCoversFields fails when a field is added to a type that snapshots write in
// binary (snapshot.go): add it to marshalSnapshot and unmarshalSnapshot, then here.
func TestSnapshotCodecCoversFields(t *testing.T) {
	for typ, want := range map[reflect.Type][]string{
		reflect.TypeFor[Cursor]():      {"Next", "Above"},
		reflect.TypeFor[SoundSample](): {"T", "DB", "DurS"},
		reflect.TypeFor[detector](): {"RunStart", "LastSample", "LastTrue", "ClearStart", "Peak", "PeakAt",
			"PeakLat", "PeakLon", "Pending", "EpisodeID", "LastEvidence"},
		reflect.TypeFor[Evidence](): {"Kind", "Epoch", "Seq", "T", "Value", "Unit", "Lat", "Lon"},
		reflect.TypeFor[Fix]():      {"T", "Lat", "Lon", "SpeedKmh", "Course", "HDOP"},
	} {
		var got []string
		for f := range typ.Fields() {
			if f.IsExported() {
				got = append(got, f.Name)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s has the fields %v; the snapshot codec writes %v", typ, got, want)
		}
	}
	// The binary parts are left out of the JSON part by name.
	for _, name := range []string{"Cursors", "Sounds", "Detectors", "LastT", "TachoT", "SoundT", "StoppedSince",
		"BoardingStopAt", "CardT", "LastSeen", "Fix", "LastGPS", "TachoKmh", "LAeqDB"} {
		if _, ok := reflect.TypeFor[Vehicle]().FieldByName(name); !ok {
			t.Errorf("Vehicle has no field %s", name)
		}
	}
}

// TestSnapshotCorrupt: a truncated or corrupt binary snapshot is an error, never a panic or a
// huge allocation.
func TestSnapshotCorrupt(t *testing.T) {
	set, loops := benchTown(t, 100)
	fleet := newBenchFleet(loops)
	e := newBenchEngine(set, fleet)
	for range 30 {
		round := fleet.round()
		for _, bt := range round {
			e.Apply(bt, round[0].SentAt.Time)
		}
	}
	c, err := e.Drain()
	if err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshots["PIU-001"]
	for n := range len(snap) - 1 {
		var v Vehicle
		if err := unmarshalSnapshot(snap[:n], &v); err == nil {
			t.Fatalf("truncated at %d of %d bytes: no error", n, len(snap))
		}
	}
	// No times, no fixes, then a count of cursors far beyond the snapshot's length.
	bad := append([]byte(snapshotMagic), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, '{', '}')
	var v Vehicle
	if err := unmarshalSnapshot(bad, &v); !errors.Is(err, errSnapshot) {
		t.Errorf("huge count: %v", err)
	}
}

func FuzzSnapshot(f *testing.F) {
	e := New(profile.Piuma(), nil)
	v := e.vehicle("PIU-001")
	v.Cursors["e1"] = &Cursor{Next: 7, Above: []uint64{9, 12}}
	v.Sounds = []SoundSample{{T: noon, DB: 70, DurS: 1}, {T: noon.Add(time.Second), DB: 71.5, DurS: 0.5}}
	v.detector("speed").RunStart = noon
	v.detector("speed").Pending = []Evidence{{Kind: "tacho", Epoch: "e1", Seq: 7, T: wire.NewTime(noon), Value: 41, Unit: "km/h", Lat: ptr(-20.8)}}
	b, err := marshalSnapshot(v, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(snapshotMagic))
	f.Add([]byte(`{"id":"PIU-001","cursors":{"e1":{"next":3}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v Vehicle
		if err := unmarshalSnapshot(b, &v); err != nil {
			return
		}
		again, err := marshalSnapshot(&v, nil)
		if err != nil {
			return // a JSON snapshot may hold what JSON cannot write back (a NaN, say)
		}
		var w Vehicle
		if err := unmarshalSnapshot(again, &w); err != nil {
			t.Fatalf("a snapshot of a restored vehicle does not restore: %v", err)
		}
		if b2, err := marshalSnapshot(&w, nil); err != nil || !bytes.Equal(b2, again) {
			t.Fatalf("snapshot not stable: %v", err)
		}
	})
}
