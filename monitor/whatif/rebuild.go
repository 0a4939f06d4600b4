package whatif

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// archivedBatch is one point of the batch measurement: a batch as ingest stored it.
type archivedBatch struct {
	epoch      string
	seq        uint64
	sentAt     time.Time
	receivedAt time.Time
	clock      wire.Clock
	kid        string
	signed     bool
	n          [kinds]int // readings it carried, as received (n_gps, …)
}

// Kinds of readings, in the order of the archive's measurements.
const (
	kGPS = iota
	kTacho
	kSound
	kService
	kDoor
	kinds
)

var kindNames = [kinds]string{"gps", "tacho", "sound", "service", "door"}

// window is what the archive holds of one vehicle in one time window: its batches in the order
// they were sent, and the readings of each kind in time order.
type window struct {
	batches []archivedBatch
	gps     []wire.GPS
	tacho   []wire.Tacho
	sound   []wire.Sound
	service []wire.Service
	door    []wire.Door
}

// readWindow reads the batches of a vehicle sent in [from, to) and the readings they carried:
// those timed after after (the last send time of the batches before, or from less lookback) and
// no later than the last batch's send time.
func (i *Influx) readWindow(ctx context.Context, vehicle string, from, to, after time.Time) (*window, error) {
	w := &window{}
	err := i.query(ctx, i.selectRange("batch", []string{"epoch", "seq", "sent_at", "received_at", "clock",
		"n_gps", "n_tacho", "n_sound", "n_service", "n_door", "kid", "signed"}, vehicle, from, to),
		func(c *cells) error {
			b := archivedBatch{epoch: c.str("epoch"), clock: wire.Clock(c.str("clock")), kid: c.str("kid")}
			seq, _, err := c.int("seq")
			if err != nil {
				return err
			}
			b.seq = uint64(seq)
			st, err := wire.ParseTime(c.str("sent_at"))
			if err != nil {
				return fmt.Errorf("batch %s/%d sent_at: %w", b.epoch, b.seq, err)
			}
			b.sentAt = st.Time
			if rt, err := wire.ParseTime(c.str("received_at")); err == nil {
				b.receivedAt = rt.Time
			} else {
				b.receivedAt = b.sentAt
			}
			for k := range kinds {
				n, _, err := c.int("n_" + kindNames[k])
				if err != nil {
					return err
				}
				b.n[k] = int(n)
			}
			b.signed, _ = c.bool("signed")
			w.batches = append(w.batches, b)
			return nil
		})
	if err != nil {
		return nil, err
	}
	if len(w.batches) == 0 {
		return w, nil
	}
	// The order they were sent in (and, within a millisecond, their seqs): the order the
	// bridge published them, the monitor judged them.
	slices.SortStableFunc(w.batches, func(a, b archivedBatch) int {
		return cmp.Or(a.sentAt.Compare(b.sentAt), cmp.Compare(a.seq, b.seq))
	})
	last := w.batches[0].sentAt
	var n [kinds]int
	for _, b := range w.batches {
		last = later(last, b.sentAt)
		for k := range kinds {
			n[k] += b.n[k]
		}
	}
	// Room for the readings the batches carried: the archive holds as many, or a few fewer.
	w.gps, w.tacho, w.sound = make([]wire.GPS, 0, n[kGPS]), make([]wire.Tacho, 0, n[kTacho]), make([]wire.Sound, 0, n[kSound])
	rf, rt := after.Add(time.Millisecond), last.Add(time.Millisecond) // (after, last]
	if err := i.query(ctx, i.selectRange("gps", []string{"lat", "lon", "speed_kmh", "course_deg", "hdop", "sats", "fix", "alt_m"}, vehicle, rf, rt),
		func(c *cells) error {
			t, err := c.ms()
			if err != nil {
				return err
			}
			g := wire.GPS{T: wire.Time{Time: t}, Fix: wire.Fix(c.str("fix"))}
			lat, err := c.float("lat")
			if err != nil || lat == nil {
				return fmt.Errorf("gps lat at %s: %v", t, err)
			}
			lon, err := c.float("lon")
			if err != nil || lon == nil {
				return fmt.Errorf("gps lon at %s: %v", t, err)
			}
			g.Lat, g.Lon = *lat, *lon
			if g.SpeedKmh, err = c.float("speed_kmh"); err != nil {
				return err
			}
			if g.CourseDeg, err = c.float("course_deg"); err != nil {
				return err
			}
			if g.HDOP, err = c.float("hdop"); err != nil {
				return err
			}
			if g.AltM, err = c.float("alt_m"); err != nil {
				return err
			}
			if n, ok, err := c.int("sats"); err != nil {
				return err
			} else if ok {
				s := int(n)
				g.Sats = &s
			}
			w.gps = append(w.gps, g)
			return nil
		}); err != nil {
		return nil, err
	}
	if err := i.query(ctx, i.selectRange("tacho", []string{"speed_kmh", "odometer_km", "card"}, vehicle, rf, rt),
		func(c *cells) error {
			t, err := c.ms()
			if err != nil {
				return err
			}
			x := wire.Tacho{T: wire.Time{Time: t}, Card: c.str("card")}
			if x.SpeedKmh, err = c.float("speed_kmh"); err != nil {
				return err
			}
			if x.OdometerKm, err = c.float("odometer_km"); err != nil {
				return err
			}
			w.tacho = append(w.tacho, x)
			return nil
		}); err != nil {
		return nil, err
	}
	if err := i.query(ctx, i.selectRange("sound", []string{"laeq_db", "lamax_db", "dur_s"}, vehicle, rf, rt),
		func(c *cells) error {
			t, err := c.ms()
			if err != nil {
				return err
			}
			x := wire.Sound{T: wire.Time{Time: t}}
			if x.LAeqDB, err = c.float("laeq_db"); err != nil {
				return err
			}
			if x.LAmaxDB, err = c.float("lamax_db"); err != nil {
				return err
			}
			if x.DurS, err = c.float("dur_s"); err != nil {
				return err
			}
			w.sound = append(w.sound, x)
			return nil
		}); err != nil {
		return nil, err
	}
	if err := i.query(ctx, i.selectRange("service", []string{"on"}, vehicle, rf, rt),
		func(c *cells) error {
			t, err := c.ms()
			if err != nil {
				return err
			}
			on, ok := c.bool("on")
			if ok {
				w.service = append(w.service, wire.Service{T: wire.Time{Time: t}, On: on})
			}
			return nil
		}); err != nil {
		return nil, err
	}
	if err := i.query(ctx, i.selectRange("door", []string{"open"}, vehicle, rf, rt),
		func(c *cells) error {
			t, err := c.ms()
			if err != nil {
				return err
			}
			open, ok := c.bool("open")
			if ok {
				w.door = append(w.door, wire.Door{T: wire.Time{Time: t}, Open: open})
			}
			return nil
		}); err != nil {
		return nil, err
	}
	return w, nil
}

// colIndex maps column names to their index.
func colIndex(cols []string) map[string]int {
	m := make(map[string]int, len(cols))
	for k, n := range cols {
		m[n] = k
	}
	return m
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// rebuilt is one batch rebuilt from the archive.
type rebuilt struct {
	*wire.Batch
	receivedAt time.Time
	signed     bool
	missing    int // readings the batch carried that the archive does not hold
}

// assembler cuts the readings of a window into its batches. A batch takes, of each kind, the
// last n readings (n its count as received) timed no later than its send time and not taken by
// an earlier batch; readings before them that no batch takes are orphans (their batch is
// outside the period, or was merged by InfluxDB with a later reading of the same time). A batch
// that finds fewer readings than it carried (two readings of one time are one point,
// docs/storage.md §1.1) is judged with those it finds, and the shortfall counted.
type assembler struct {
	cur     [kinds]int
	orphans int
}

func take[T any](rs []T, cur *int, sentAt time.Time, n int, t func(*T) time.Time) (out []T, orphans int) {
	j := *cur
	for j < len(rs) && !t(&rs[j]).After(sentAt) {
		j++
	}
	avail := rs[*cur:j]
	*cur = j
	if len(avail) > n {
		orphans = len(avail) - n
		avail = avail[orphans:]
	}
	return slices.Clip(avail), orphans
}

// batches rebuilds the window's batches of vehicle, in order.
func (a *assembler) batches(vehicle string, w *window) []rebuilt {
	out := make([]rebuilt, 0, len(w.batches))
	for _, ab := range w.batches {
		b := &wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: ab.epoch, Seq: ab.seq, SentAt: wire.Time{Time: ab.sentAt},
			Clock: ab.clock, Kid: ab.kid}
		var o, got int
		b.GPS, o = take(w.gps, &a.cur[kGPS], ab.sentAt, ab.n[kGPS], func(g *wire.GPS) time.Time { return g.T.Time })
		a.orphans += o
		b.Tacho, o = take(w.tacho, &a.cur[kTacho], ab.sentAt, ab.n[kTacho], func(g *wire.Tacho) time.Time { return g.T.Time })
		a.orphans += o
		b.Sound, o = take(w.sound, &a.cur[kSound], ab.sentAt, ab.n[kSound], func(g *wire.Sound) time.Time { return g.T.Time })
		a.orphans += o
		b.Service, o = take(w.service, &a.cur[kService], ab.sentAt, ab.n[kService], func(g *wire.Service) time.Time { return g.T.Time })
		a.orphans += o
		b.Door, o = take(w.door, &a.cur[kDoor], ab.sentAt, ab.n[kDoor], func(g *wire.Door) time.Time { return g.T.Time })
		a.orphans += o
		got = b.Readings()
		want := 0
		for _, n := range ab.n {
			want += n
		}
		out = append(out, rebuilt{Batch: b, receivedAt: ab.receivedAt, signed: ab.signed, missing: max(0, want-got)})
	}
	// What is left after the last batch is later than its send time: none, by the query.
	for k := range kinds {
		a.cur[k] = 0
	}
	return out
}
