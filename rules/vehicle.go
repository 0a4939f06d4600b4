package rules

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// Vehicle is the monitor's knowledge of one vehicle: where it is, what its instruments said
// last, which batches it has judged, and the state of every rule. It is plain data (JSON) so
// that a snapshot taken when a group of batches is committed restores it exactly after a restart.
type Vehicle struct {
	ID       string `json:"id"`
	Licensee string `json:"licensee,omitempty"`

	Cursors map[string]*Cursor `json:"cursors"` // by epoch
	Epoch   string             `json:"epoch,omitempty"`

	// Device-time state.
	LastT     time.Time `json:"last_t,omitzero"` // newest reading judged
	Fix       *Fix      `json:"fix,omitempty"`   // last fix accepted as evidence
	LastGPS   *Fix      `json:"last_gps,omitempty"`
	TachoT    time.Time `json:"tacho_t,omitzero"`
	TachoKmh  *float64  `json:"tacho_kmh,omitempty"`
	LAeqDB    *float64  `json:"laeq_db,omitempty"`
	SoundT    time.Time `json:"sound_t,omitzero"`
	ServiceOn *bool     `json:"service_on,omitempty"` // the bridge's service switch, when wired
	// ServiceSince is when the service switch last turned on (zero while off or unknown).
	ServiceSince time.Time `json:"service_since,omitzero"`
	// BoardedAt is the last boarding observed at a boarding point (stopped there with the
	// passenger door open), BoardedPlace that point's name: service observed (ServiceBoarding).
	BoardedAt    time.Time `json:"boarded_at,omitzero"`
	BoardedPlace string    `json:"boarded_place,omitempty"`
	// ParkedReadFrom and ParkedReadT are the first and last reading of the run of readings the
	// vehicle sent while stopped (parked_public_road: what readings observed, not silence).
	ParkedReadFrom time.Time `json:"parked_read_from,omitzero"`
	ParkedReadT    time.Time `json:"parked_read_t,omitzero"`
	// DoorOpen is the passenger door's state, when its input is wired (nil: unknown); DoorT
	// the device time of its newest change and DoorOpenedAt when it last opened (zero while
	// closed).
	DoorOpen     *bool     `json:"door_open,omitempty"`
	DoorT        time.Time `json:"door_t,omitzero"`
	DoorOpenedAt time.Time `json:"door_opened_at,omitzero"`
	// Sounds are the recent sound readings, for the rolling L_Aeq windows.
	Sounds []SoundSample `json:"sounds,omitempty"`
	// StoppedSince is when the vehicle last came to a stop (zero while moving or unknown).
	StoppedSince time.Time `json:"stopped_since,omitzero"`
	// BoardingStopAt is the last time the vehicle stood at a demarcated boarding point (device
	// time), for service_switch_suspect.
	BoardingStopAt time.Time `json:"boarding_stop_at,omitzero"`
	// R1M is the distance from the meter to the loudspeaker (registry; 0: the profile's).
	R1M float64 `json:"r1_m,omitempty"`
	// Card is the last driver card the tachograph reported, as reported, and CardT when
	// (device time).
	Card  string    `json:"card,omitempty"`
	CardT time.Time `json:"card_t,omitzero"`
	// expired lists the vehicle's expired registry items for a driver card and an instant
	// (Registration.Expired, set on every batch); nil: not registered. docs caches its answer.
	expired func(card string, at time.Time) []registry.Expiry
	docs    docCache
	// hours caches the service windows around the local day of the last reading judged by
	// the hours rule (serviceWindows).
	hours hoursCache
	// driverByCard finds the registered driver of a card (Registration.DriverByCard).
	driverByCard func(card string) (registry.Driver, bool)
	// suspendedOn and uninspectedOn are Registration's.
	suspendedOn   func(licensee string, day registry.Date) (registry.Period, bool)
	uninspectedOn func(day registry.Date) (registry.VehicleEvent, bool)
	// inspectionOverdue is Registration.InspectionOverdue.
	inspectionOverdue func(day registry.Date) (registry.InspectionRequest, bool)

	Detectors map[string]*detector `json:"detectors"`
	// Episodes holds the episodes a detector may still change: open ones, and those closed as
	// interrupted that data resuming could reopen.
	Episodes map[string]*Episode `json:"episodes"`

	// Receive-clock state (not judged, shown).
	LastSeen time.Time    `json:"last_seen,omitzero"`
	Status   *wire.Status `json:"status,omitempty"`

	// Faults are the open fault episodes (clock_fault, telemetry_conflict) by rule (clock.go).
	Faults map[string]Fault `json:"faults,omitempty"`

	// Counters.
	Duplicates  int64 `json:"duplicates"`
	OutOfOrder  int64 `json:"out_of_order"`
	NotEvidence int64 `json:"not_evidence"`
	ClockFaults int64 `json:"clock_faults"` // readings or batches ahead of the receive clock

	eng     *Engine
	pending *pendingChanges
	// places is what the geofences answered at the vehicle's last position (engine.go).
	places placeMemo
	// noDocDetectors: the vehicle has no document_expired detector (hasDocDetectors).
	noDocDetectors bool
	// leqs are leq's last answers for the current Sounds (sound.go), leqNext the one to
	// replace next.
	leqs    [2]leqMemo
	leqNext int
	// sums are the running energy sums over Sounds (leqbounds.go).
	sums soundSums
	// sites are the sensitive sites around the vehicle's recent positions, for
	// openSensitiveSite (geofences.NearCache: the same answers as the index).
	sites geofences.NearCache
}

// Cursor records which sequence numbers of one epoch were judged: every seq below Next, and
// those in Above.
type Cursor struct {
	Next  uint64   `json:"next"`
	Above []uint64 `json:"above,omitempty"`
}

// maxAbove bounds the out-of-order seqs a cursor remembers; beyond it the oldest gap is
// considered lost (a spool eviction) and skipped.
const maxAbove = 1024

// seen reports whether seq was judged already, and marks it otherwise.
func (c *Cursor) mark(seq uint64) (dup bool) {
	if seq < c.Next {
		return true
	}
	i := sort.Search(len(c.Above), func(i int) bool { return c.Above[i] >= seq })
	if i < len(c.Above) && c.Above[i] == seq {
		return true
	}
	if seq == c.Next {
		c.Next++
	} else {
		c.Above = append(c.Above, 0)
		copy(c.Above[i+1:], c.Above[i:])
		c.Above[i] = seq
	}
	for len(c.Above) > 0 && c.Above[0] <= c.Next {
		if c.Above[0] == c.Next {
			c.Next++
		}
		c.Above = c.Above[1:]
	}
	if len(c.Above) > maxAbove {
		c.Next = c.Above[0] + 1
		c.Above = c.Above[1:]
	}
	return false
}

// Fix is a position with the time it was measured.
type Fix struct {
	T        time.Time `json:"t"`
	Lat      float64   `json:"lat"`
	Lon      float64   `json:"lon"`
	SpeedKmh *float64  `json:"speed_kmh,omitempty"`
	Course   *float64  `json:"course,omitempty"`
	// HDOP is the fix's horizontal dilution of precision (nil: not reported).
	HDOP *float64 `json:"hdop,omitempty"`
}

// SoundSample is one sound reading kept for the rolling windows.
type SoundSample struct {
	T    time.Time `json:"t"`
	DB   float64   `json:"db"`
	DurS float64   `json:"dur_s"`

	// A cache for leq: 10^((DB−energyTop[i])/10) for the last two window tops asked for
	// (see relativeEnergy).
	energy, energyTop [2]float64
	energyKnown       uint8 // slots filled
	energyNext        uint8 // slot to fill next
	// For leqBounds (leqbounds.go): DurS·10^(DB/10) once absKnown.
	abs      float64
	absKnown bool
}

// freshness of an instrument's last value.
const (
	tachoFresh = 3 * time.Second
	gpsFresh   = 5 * time.Second
)

// SpeedAt returns the vehicle's speed at t: the tachograph's when fresh, else the last accepted
// GPS fix's; ok is false when neither is fresh.
func (v *Vehicle) SpeedAt(t time.Time) (kmh float64, source string, ok bool) {
	if v.TachoKmh != nil && absDur(t.Sub(v.TachoT)) <= tachoFresh {
		return *v.TachoKmh, "tacho", true
	}
	if v.Fix != nil && v.Fix.SpeedKmh != nil && absDur(t.Sub(v.Fix.T)) <= gpsFresh {
		return *v.Fix.SpeedKmh, "gps", true
	}
	return 0, "", false
}

// tachoPresent reports whether the tachograph's output is fresh at t.
func (v *Vehicle) tachoPresent(t time.Time) bool {
	return v.TachoKmh != nil && absDur(t.Sub(v.TachoT)) <= tachoFresh
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// hdop returns the HDOP of the position at t (nil: unknown).
func (v *Vehicle) hdop(t time.Time) *float64 {
	if v.Fix != nil && absDur(t.Sub(v.Fix.T)) <= gpsFresh {
		return v.Fix.HDOP
	}
	return nil
}

// position returns the last accepted position if it is fresh at t.
func (v *Vehicle) position(t time.Time) (lat, lon float64, ok bool) {
	if v.Fix != nil && absDur(t.Sub(v.Fix.T)) <= gpsFresh {
		return v.Fix.Lat, v.Fix.Lon, true
	}
	return 0, 0, false
}

func (v *Vehicle) detector(rule string) *detector {
	d := v.Detectors[rule]
	if d == nil {
		d = &detector{}
		v.Detectors[rule] = d
		if strings.HasPrefix(rule, docDetectorPrefix) {
			v.noDocDetectors = false
		}
	}
	return d
}

func (v *Vehicle) episode(id string) *Episode {
	if id == "" {
		return nil
	}
	return v.Episodes[id]
}

// haversine distance in metres (for the implied speed between fixes; geodesic precision is not
// needed to reject a jump of hundreds of metres).
func haversine(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371008.8
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := p2-p1, (lon2-lon1)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * r * math.Asin(math.Min(1, math.Sqrt(a)))
}

func newTime(t time.Time) wire.Time { return wire.NewTime(t) }

func ptr[T any](v T) *T { return &v }
