// Package rules is the monitor's judgement: the rules of the law (docs/rules.md) applied to each
// vehicle's readings in device-time order, producing episodes. Each rule lives in its own file
// (speed.go, hours.go, …) and takes every number it applies from the legal profile.
//
// The Engine is not safe for concurrent use: one goroutine applies batches, ticks the receive
// clock and drains the changes, which the caller persists before acknowledging the batches.
package rules

import (
	"fmt"
	"slices"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// Engine applies the rules to every vehicle.
type Engine struct {
	profile *profile.Profile
	places  *geofences.Set // nil: no geofences; the rules that need them are not evaluated
	// registered looks a vehicle up in the registry; nil: no registry, every vehicle is "não
	// cadastrado" and the rules that need its licensee are not evaluated.
	registered func(vehicle string) (Registration, bool)
	rules      []rule
	vehicles   map[string]*Vehicle
	changes    pendingChanges
	// written is the last snapshot Drain returned of each vehicle: a vehicle whose snapshot
	// has not changed since is not written again.
	written map[string][]byte

	// licensed caches each licensee's itineraries and garages: places is immutable, and the
	// rules ask for them on every reading.
	licensed map[string]*licenseePlaces
	// Scratch space of Apply, reused from batch to batch so that judging a reading allocates
	// as little as possible.
	scratch []reading            // the readings of the batch being judged
	hits    []geofences.Hit      // sensitive sites or itineraries near a position (one lookup at a time)
	active  []*geofences.Feature // itineraries active at a time
	// siteHours is siteOpen's last answer per sensitive site (places is immutable: bounded).
	siteHours map[*geofences.Feature]siteHoursAt
	// document_expired's detector keys of the reading being judged (see document_expired.go)
	docKeys, docStale []string
	// exactLeq: noise_limit computes every level, never judging from leqBounds (the tests
	// compare both ways).
	exactLeq bool
	// svc is InService's answer for the reading being judged.
	svc serviceMemo
	// widestCorridor is the widest corridor of the itineraries, once corridorKnown (rotation.go).
	widestCorridor float64
	corridorKnown  bool
	// leqBounded and leqComputed count noise_limit's levels judged from leqBounds and computed.
	leqBounded, leqComputed int
}

// licenseePlaces are the geofences of one licensee.
type licenseePlaces struct {
	itineraries []*geofences.Feature // sorted by id, whatever their days, hours and validity
	garages     []*geofences.Feature // sorted by id
}

// placesOf returns the licensee's itineraries and garages; e.places must not be nil.
func (e *Engine) placesOf(licensee string) *licenseePlaces {
	lp := e.licensed[licensee]
	if lp == nil {
		lp = &licenseePlaces{itineraries: e.places.Itineraries(licensee), garages: e.places.Garages(licensee)}
		if e.licensed == nil {
			e.licensed = map[string]*licenseePlaces{}
		}
		e.licensed[licensee] = lp
	}
	return lp
}

// rule is one rule of the law.
type rule interface {
	id() string
	// observe judges one reading of a vehicle, in device-time order.
	observe(e *Engine, v *Vehicle, r *reading)
}

// reading is one reading of a batch, in the order the rules see them.
type reading struct {
	T       time.Time
	Epoch   string
	Seq     uint64
	GPS     *wire.GPS
	Tacho   *wire.Tacho
	Sound   *wire.Sound
	Service *wire.Service
	Door    *wire.Door
	// Evidence: the GPS sample passed the evidence checks (fix, HDOP, implied speed, tachograph).
	Evidence bool
	// Quality: the GPS sample passed the checks of its own quality (fix, HDOP, implied speed),
	// whatever the tachograph says — what telemetry_fault compares the tachograph with.
	Quality bool
}

// New returns an engine for a profile and a set of geofences (nil: none).
func New(p *profile.Profile, places *geofences.Set) *Engine {
	return &Engine{
		profile: p,
		places:  places,
		rules: []rule{speedRule{}, hoursRule{}, sensitiveZoneRule{}, boardingRule{}, noiseRule{},
			routeRule{}, parkedRule{}, telemetryRule{}, documentRule{}, switchSuspectRule{}, driverCardRule{},
			driverRemovedRule{}, suspendedRule{}, uninspectedRule{}, rotationRule{}, boardingOutsideRule{},
			speedOutOfServiceRule{}},
		vehicles: map[string]*Vehicle{},
		changes:  newPendingChanges(),
	}
}

// Result says what Apply did with a batch.
type Result struct {
	Duplicate bool
	NewEpoch  bool
	Judged    int // readings judged
	Skipped   int // readings not judged (out of order, or not evidence)
}

// Vehicle returns the state of a vehicle, creating it when unknown.
func (e *Engine) vehicle(id string) *Vehicle {
	v := e.vehicles[id]
	if v == nil {
		v = &Vehicle{ID: id}
		e.attach(v)
		e.vehicles[id] = v
	}
	return v
}

func (e *Engine) attach(v *Vehicle) {
	v.eng = e
	v.pending = &e.changes
	if v.Cursors == nil {
		v.Cursors = map[string]*Cursor{}
	}
	if v.Detectors == nil {
		v.Detectors = map[string]*detector{}
	}
	if v.Episodes == nil {
		v.Episodes = map[string]*Episode{}
	}
}

// Registration is what the registry says of a vehicle that the rules use.
type Registration struct {
	Licensee string
	// DriverByCard finds the registered driver of a tachograph card (registry.Store.DriverByCard);
	// nil: the driver rules are not evaluated.
	DriverByCard func(card string) (registry.Driver, bool)
	// SuspendedOn returns the suspension of a licensee that covers a day (nil: not judged).
	SuspendedOn func(licensee string, day registry.Date) (registry.Period, bool)
	// UninspectedOn returns the failed inspection or accident that keeps the vehicle from
	// circulating on a day (registry.Vehicle.UninspectedOn; nil: not judged).
	UninspectedOn func(day registry.Date) (registry.VehicleEvent, bool)
	// InspectionOverdue returns the inspection the organ required whose date passed before a
	// day without the vehicle submitted nor a justification approved
	// (registry.Vehicle.InspectionOverdue); nil: none is known, and an expired inspection
	// grounds no auto (Art. 45, IV).
	InspectionOverdue func(day registry.Date) (registry.InspectionRequest, bool)
	// LicenseeOn is the vehicle's licensee on a day (registry.Vehicle.LicenseeOn); nil: Licensee
	// on every day.
	LicenseeOn func(day registry.Date) string
	// MeterDistanceM is r₁, the meter's distance to the loudspeaker (0: the profile's).
	MeterDistanceM float64
	// Expired lists what the vehicle lacks when in service at an instant, with the driver card
	// the tachograph reports ("" when none): registry.Store.ExpiredFor. Nil: document_expired
	// is not evaluated for the vehicle.
	Expired func(card string, at time.Time) []registry.Expiry
}

// SetRegistry sets how the engine looks vehicles up in the registry. It is read on every batch,
// so that registry edits apply from the next batch on.
func (e *Engine) SetRegistry(lookup func(vehicle string) (Registration, bool)) { e.registered = lookup }

// Apply judges one decoded batch received at receivedAt (the receive clock).
func (e *Engine) Apply(b *wire.Batch, receivedAt time.Time) Result {
	v := e.vehicle(b.Vehicle)
	if e.registered != nil {
		reg, _ := e.registered(b.Vehicle)
		v.Licensee, v.R1M = reg.Licensee, reg.MeterDistanceM
		if reg.LicenseeOn != nil {
			// The licensee of the batch's own day: a late batch from before a transfer is the
			// old licensee's.
			v.Licensee = reg.LicenseeOn(registry.DateOf(batchStart(b).In(e.profile.Location())))
		}
		v.expired, v.docs = reg.Expired, docCache{}
		v.driverByCard = reg.DriverByCard
		v.suspendedOn, v.uninspectedOn, v.inspectionOverdue = reg.SuspendedOn, reg.UninspectedOn, reg.InspectionOverdue
	}
	var res Result
	c := v.Cursors[b.Epoch]
	if c == nil {
		c = &Cursor{Next: 1}
		v.Cursors[b.Epoch] = c
	}
	if c.mark(b.Seq) {
		v.Duplicates++
		e.changes.dirty[v.ID] = true
		res.Duplicate = true
		return res
	}
	e.changes.dirty[v.ID] = true
	if receivedAt.After(v.LastSeen) {
		v.LastSeen = receivedAt
	}
	if v.Epoch != b.Epoch {
		if v.Epoch != "" {
			res.NewEpoch = true
			e.changes.events = append(e.changes.events, Event{Kind: EventNewEpoch, Vehicle: v.ID, Epoch: b.Epoch})
		}
		v.Epoch = b.Epoch
		e.pruneCursors(v)
	}
	rs := readings(e.scratch, b)
	var ahead time.Duration // the furthest a reading is ahead of the receive clock, beyond ClockTolerance
	for i := range rs {
		r := &rs[i]
		// Device time orders the readings only within a bounded window (clock.go).
		if d := r.T.Sub(receivedAt); !receivedAt.IsZero() && d > ClockTolerance {
			ahead = max(ahead, d)
			res.Skipped++
			continue
		}
		if !e.accept(v, r, b.Clock) {
			res.Skipped++
			continue
		}
		res.Judged++
		e.svc = serviceMemo{judging: true}
		for _, rl := range e.rules {
			rl.observe(e, v, r)
		}
		e.svc = serviceMemo{}
		if r.T.After(v.LastT) {
			v.LastT = r.T
		}
	}
	clear(rs) // keep no pointer into the batch
	e.scratch = rs[:0]
	if ahead > 0 {
		e.clockFault(v, ahead, receivedAt)
	} else if !receivedAt.IsZero() {
		e.faultsCleared(v, receivedAt)
	}
	return res
}

// pruneCursors keeps the cursors of the current epoch and the few before it.
func (e *Engine) pruneCursors(v *Vehicle) {
	const keep = 8
	if len(v.Cursors) <= keep {
		return
	}
	for ep := range v.Cursors {
		if ep != v.Epoch && len(v.Cursors) > keep {
			delete(v.Cursors, ep)
		}
	}
}

// readings flattens a batch into one time-ordered list (stable: tachograph, GPS, sound, service,
// door at equal times), reusing buf's array.
func readings(buf []reading, b *wire.Batch) []reading {
	rs := slices.Grow(buf[:0], b.Readings())
	for i := range b.Tacho {
		rs = append(rs, reading{T: b.Tacho[i].T.Time, Tacho: &b.Tacho[i]})
	}
	for i := range b.GPS {
		rs = append(rs, reading{T: b.GPS[i].T.Time, GPS: &b.GPS[i]})
	}
	for i := range b.Sound {
		rs = append(rs, reading{T: b.Sound[i].T.Time, Sound: &b.Sound[i]})
	}
	for i := range b.Service {
		rs = append(rs, reading{T: b.Service[i].T.Time, Service: &b.Service[i]})
	}
	for i := range b.Door {
		rs = append(rs, reading{T: b.Door[i].T.Time, Door: &b.Door[i]})
	}
	for i := range rs {
		rs[i].Epoch, rs[i].Seq = b.Epoch, b.Seq
	}
	slices.SortStableFunc(rs, func(a, b reading) int { return a.T.Compare(b.T) })
	return rs
}

// accept updates the vehicle's instrument state with a reading and reports whether the rules
// should judge it. Readings older than the newest of their kind (replays from another epoch,
// reordering) and readings timed by the system clock are not judged.
func (e *Engine) accept(v *Vehicle, r *reading, clock wire.Clock) bool {
	evidence := clock != wire.ClockSystem
	switch {
	case r.Tacho != nil:
		if !r.T.After(v.TachoT) {
			v.OutOfOrder++
			return false
		}
		if !evidence {
			v.NotEvidence++
			return false
		}
		v.TachoT = r.T
		v.TachoKmh = r.Tacho.SpeedKmh
		if r.Tacho.Card != "" {
			v.Card, v.CardT = r.Tacho.Card, r.T
		}
	case r.GPS != nil:
		if v.LastGPS != nil && !r.T.After(v.LastGPS.T) {
			v.OutOfOrder++
			return false
		}
		g := r.GPS
		f := &Fix{T: r.T, Lat: g.Lat, Lon: g.Lon, SpeedKmh: g.SpeedKmh, Course: g.CourseDeg, HDOP: g.HDOP}
		v.LastGPS = f
		if !evidence {
			v.NotEvidence++
			return false
		}
		r.Quality, r.Evidence = e.gpsEvidence(v, g)
		if r.Quality {
			// A position of good quality is the vehicle's position even when its speed
			// disagrees with the tachograph (the speed rules then use the tachograph's).
			v.Fix = f
		}
		if !r.Evidence {
			v.NotEvidence++
		}
	case r.Sound != nil:
		if !r.T.After(v.SoundT) {
			v.OutOfOrder++
			return false
		}
		v.SoundT = r.T
		v.LAeqDB = r.Sound.LAeqDB
		if !evidence {
			v.NotEvidence++
			return false
		}
		e.keepSound(v, r.Sound)
	case r.Service != nil:
		on := r.Service.On
		switch {
		case !on:
			v.ServiceSince = time.Time{}
		case v.ServiceOn == nil || !*v.ServiceOn || v.ServiceSince.IsZero():
			v.ServiceSince = r.T
		}
		v.ServiceOn = &on
	case r.Door != nil:
		// A door change older than the newest one (a replay, reordering) says nothing of now.
		if !r.T.After(v.DoorT) {
			v.OutOfOrder++
			return false
		}
		v.DoorT = r.T
		if !evidence {
			// A door timed by the system clock cannot be placed among the evidence: the door's
			// state is unknown until a change that can (boarding is then not judged).
			v.DoorOpen, v.DoorOpenedAt = nil, time.Time{}
			v.NotEvidence++
			return false
		}
		open := r.Door.Open
		v.DoorOpen = &open
		switch {
		case !open:
			v.DoorOpenedAt = time.Time{}
		case v.DoorOpenedAt.IsZero():
			v.DoorOpenedAt = r.T
		}
	}
	if r.Tacho != nil || (r.GPS != nil && r.Evidence) {
		e.trackStop(v, r.T)
	}
	if r.Tacho != nil || (r.GPS != nil && r.Evidence) || r.Door != nil {
		e.noteBoarding(v, r.T)
	}
	return true
}

// trackStop keeps StoppedSince: when the vehicle's speed last fell below the profile's
// stopped speed.
func (e *Engine) trackStop(v *Vehicle, t time.Time) {
	kmh, _, ok := v.SpeedAt(t)
	if !ok {
		return
	}
	if kmh < e.profile.Boarding.StoppedKmh {
		if v.StoppedSince.IsZero() {
			v.StoppedSince = t
		}
	} else {
		v.StoppedSince = time.Time{}
	}
}

// gpsEvidence applies the evidence checks of docs/rules.md ("Evidence") to a GPS sample: quality is a fix of
// known good quality, an HDOP within the profile's bound and a speed consistent with the
// distance and time from the previous accepted fix; evidence is quality and a speed consistent
// with the tachograph's.
func (e *Engine) gpsEvidence(v *Vehicle, g *wire.GPS) (quality, evidence bool) {
	quality = e.gpsQuality(v, g)
	t := g.T.Time
	if quality && g.SpeedKmh != nil && v.tachoPresent(t) && abs(*g.SpeedKmh-*v.TachoKmh) > e.profile.Evidence.MaxGPSTachoDiffKmh {
		return true, false
	}
	return quality, quality
}

func (e *Engine) gpsQuality(v *Vehicle, g *wire.GPS) bool {
	p := e.profile.Evidence
	switch g.Fix {
	case wire.FixNone, wire.FixEstimated:
		return false
	}
	if g.HDOP != nil && *g.HDOP > p.MaxHDOP {
		return false
	}
	t := g.T.Time
	if prev := v.Fix; prev != nil {
		dt := t.Sub(prev.T).Seconds()
		if dt > 0 && dt <= 10 {
			implied := haversine(prev.Lat, prev.Lon, g.Lat, g.Lon) / dt * 3.6
			var reported float64
			if g.SpeedKmh != nil {
				reported = *g.SpeedKmh
			}
			if prev.SpeedKmh != nil {
				reported = (reported + *prev.SpeedKmh) / 2
			}
			if abs(implied-reported) > p.MaxImpliedDiffKmh {
				return false
			}
		}
	}
	return true
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// ticker is a rule that also judges silent vehicles (parked_public_road).
type ticker interface {
	tick(e *Engine, v *Vehicle, deviceTime time.Time)
}

// Tick applies the receive clock: the open episodes of a vehicle that sent nothing for the
// profile's gap timeout close as interrupted — except those of rules that judge silent vehicles,
// which are judged at the vehicle's last device time advanced by the silence.
func (e *Engine) Tick(now time.Time) {
	gap := time.Duration(e.profile.GapTimeoutS * float64(time.Second))
	for _, v := range e.vehicles {
		if v.LastSeen.IsZero() || now.Sub(v.LastSeen) < gap {
			continue
		}
		tickers := map[string]ticker{}
		for _, rl := range e.rules {
			if t, ok := rl.(ticker); ok {
				tickers[rl.id()] = t
				if !v.LastT.IsZero() {
					t.tick(e, v, v.LastT.Add(now.Sub(v.LastSeen)))
				}
			}
		}
		for id, d := range v.Detectors {
			if _, ok := tickers[id]; ok {
				continue
			}
			if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil {
				d.interrupt(v)
				e.changes.dirty[v.ID] = true
			}
		}
	}
}

// newEpisode starts an episode of a rule with the profile's legal mapping.
func (e *Engine) newEpisode(v *Vehicle, rule string, start time.Time, unit string, limit, tolerance float64, source string) *Episode {
	m := e.profile.Rules[rule]
	ep := &Episode{
		ID:           EpisodeID(v.ID, rule, start),
		Vehicle:      v.ID,
		Rule:         rule,
		Article:      m.Article,
		Penalty:      m.Penalty,
		Start:        newTime(start),
		Unit:         unit,
		Limit:        limit,
		Tolerance:    tolerance,
		Source:       source,
		Epoch:        v.Epoch,
		Unregistered: v.Licensee == "",
		GroundsAuto:  true,
	}
	if !m.Infraction && rule != profile.DocumentExpiredRule {
		ep.noGround(noteAlertOnly)
	}
	return ep
}

// noteAlertOnly is the grounds note of a rule the profile does not treat as an infraction.
const noteAlertOnly = "alerta: o perfil legal não trata esta regra como infração"

// EpisodeID is deterministic, so that a replay or a restart finds the same episode.
func EpisodeID(vehicle, rule string, start time.Time) string {
	return fmt.Sprintf("%s.%s.%s", vehicle, rule, start.UTC().Format("20060102T150405.000Z"))
}

// Restore loads a vehicle snapshot taken by Drain.
func (e *Engine) Restore(snapshot []byte) error {
	var v Vehicle
	if err := unmarshalSnapshot(snapshot, &v); err != nil {
		return fmt.Errorf("rules: restore vehicle: %w", err)
	}
	e.attach(&v)
	e.vehicles[v.ID] = &v
	return nil
}

// SetStatus records a vehicle's retained status message (receive clock only).
func (e *Engine) SetStatus(vehicle string, s *wire.Status, receivedAt time.Time) {
	v := e.vehicle(vehicle)
	v.Status = s
	e.changes.dirty[v.ID] = true
}

// StatusOf returns the vehicle's last status message, or nil.
func (e *Engine) StatusOf(vehicle string) *wire.Status {
	if v := e.vehicles[vehicle]; v != nil {
		return v.Status
	}
	return nil
}

// Tracks reports whether the engine holds state for the vehicle.
func (e *Engine) Tracks(vehicle string) bool { return e.vehicles[vehicle] != nil }

// Len returns the number of vehicles the engine holds state for.
func (e *Engine) Len() int { return len(e.vehicles) }

// PendingEvents returns how many events (an episode opened, closed or reopened, a new epoch)
// wait for the next Drain.
func (e *Engine) PendingEvents() int { return len(e.changes.events) }

// VehicleByID returns the state of a vehicle, nil when the engine holds none; the caller
// must not keep it.
func (e *Engine) VehicleByID(id string) *Vehicle { return e.vehicles[id] }

// Vehicles calls fn for every vehicle; fn must not keep v.
func (e *Engine) Vehicles(fn func(v *Vehicle)) {
	for _, v := range e.vehicles {
		fn(v)
	}
}

// OpenEpisodeIDs lists the vehicle's open episodes.
func (v *Vehicle) OpenEpisodeIDs() []string {
	var ids []string
	for id, ep := range v.Episodes {
		if ep.End == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// InService reports whether the vehicle is in service at t per the profile (docs/rules.md, "In service"): the
// driver's service switch when wired and the profile lets it decide; otherwise outside its
// licensee's garage and moving, or stopped at a boarding point. With no garage on file for the
// licensee, moving is in service (a vehicle cannot move far inside a garage).
func (e *Engine) InService(v *Vehicle, t time.Time) (in, known bool) {
	m := &e.svc
	if !m.judging {
		in, known, _ = e.inService(v, t)
		return in, known
	}
	// Judging one reading, the rules ask it again and again (speed, hours, route, rotation…),
	// and nothing it depends on changes between them: the vehicle's state is updated before the
	// rules observe the reading (accept), and what behavesInService records (BoardingStopAt) it
	// records alike on every call.
	if m.known && m.v == v && m.t.Equal(t) {
		return m.in, m.ok
	}
	var b ServiceBasis
	in, known, b = e.inService(v, t)
	*m = serviceMemo{judging: true, known: true, v: v, t: t, in: in, ok: known, basis: b}
	return in, known
}

// serviceMemo is InService's answer while the rules judge one reading.
type serviceMemo struct {
	judging, known bool
	v              *Vehicle
	t              time.Time
	in, ok         bool
	basis          ServiceBasis
}

// inService is InService with how service was established (the zero basis when not in service).
func (e *Engine) inService(v *Vehicle, t time.Time) (in, known bool, basis ServiceBasis) {
	p := e.profile.InService
	if v.ServiceOn != nil && p.ServiceInputOverrides {
		if !*v.ServiceOn && p.SwitchSuspect.IsService {
			if _, suspect := e.behavesInService(v, t); suspect {
				return true, true, ServiceBasis{How: ServiceBehaviour}
			}
		}
		if !*v.ServiceOn {
			return false, true, ServiceBasis{}
		}
		return true, true, ServiceBasis{How: ServiceSwitch, Since: newTimeOrZero(v.ServiceSince)}
	}
	kmh, _, ok := v.SpeedAt(t)
	if !ok {
		return false, false, ServiceBasis{}
	}
	moving := kmh >= p.MovingKmh
	if moving && p.OutsideGarageMoving {
		if e.inGarage(v, t) {
			v.BoardedAt, v.BoardedPlace = time.Time{}, "" // the trip that boarding began is over
			return false, true, ServiceBasis{}
		}
		if b, ok := e.boarded(v, t); ok {
			return true, true, b
		}
		return true, true, ServiceBasis{How: ServiceMovement}
	}
	if !moving && p.AtBoardingPoint && e.atBoardingPoint(v, t) {
		if b, ok := e.boarded(v, t); ok {
			return true, true, b
		}
		return true, true, ServiceBasis{How: ServiceStopAtPoint}
	}
	return false, true, ServiceBasis{}
}

// newTimeOrZero is the wire time of t, the zero time when t is zero.
func newTimeOrZero(t time.Time) wire.Time {
	if t.IsZero() {
		return wire.Time{}
	}
	return wire.NewTime(t)
}

// inGarage reports whether the vehicle's position at t is inside one of its licensee's
// garages (false when unknown: no position, no licensee, no garage on file).
func (e *Engine) inGarage(v *Vehicle, t time.Time) bool {
	lat, lon, ok := v.position(t)
	if !ok || e.places == nil || v.Licensee == "" {
		return false
	}
	return e.garageAt(v, orb.Point{lon, lat})
}

// atBoardingPoint reports whether the vehicle's position at t is within a boarding point.
func (e *Engine) atBoardingPoint(v *Vehicle, t time.Time) bool {
	lat, lon, ok := v.position(t)
	if !ok || e.places == nil {
		return false
	}
	_, at := e.boardingPointAt(v, orb.Point{lon, lat})
	return at
}

// placeMemo keeps what the geofences answered at the vehicle's last position looked up. A
// vehicle stays at one position for several readings (a fix stands for the tachograph's and
// the meter's readings of the same second, and a stopped vehicle's fixes repeat it), and
// several rules ask the same questions there: in service asks for the garage or the boarding
// point once per rule. The geofences are immutable, so an answer holds for as long as the
// position does (and, for the garage, the licensee): the memo changes no answer.
type placeMemo struct {
	pt orb.Point

	garage      bool // garageOf's garage contains pt
	garageOf    string
	garageKnown bool
	board       geofences.Hit // BoardingPointAt(pt)
	atBoard     bool
	boardKnown  bool
	zone        *geofences.Feature // ZoneAt(pt)
	inZone      bool
	zoneKnown   bool
	hasPt       bool
}

// memoAt returns the vehicle's memo for position pt, emptied when pt is another position.
func (v *Vehicle) memoAt(pt orb.Point) *placeMemo {
	m := &v.places
	if !m.hasPt || m.pt != pt {
		*m = placeMemo{pt: pt, hasPt: true}
	}
	return m
}

// garageAt is e.places.InGarage(pt, v.Licensee), through the vehicle's memo.
func (e *Engine) garageAt(v *Vehicle, pt orb.Point) bool {
	m := v.memoAt(pt)
	if !m.garageKnown || m.garageOf != v.Licensee {
		m.garage, m.garageOf, m.garageKnown = e.places.InGarage(pt, v.Licensee), v.Licensee, true
	}
	return m.garage
}

// boardingPointAt is e.places.BoardingPointAt(pt), through the vehicle's memo.
func (e *Engine) boardingPointAt(v *Vehicle, pt orb.Point) (geofences.Hit, bool) {
	m := v.memoAt(pt)
	if !m.boardKnown {
		m.board, m.atBoard = e.places.BoardingPointAt(pt)
		m.boardKnown = true
	}
	return m.board, m.atBoard
}

// zoneAt is e.places.ZoneAt(pt), through the vehicle's memo.
func (e *Engine) zoneAt(v *Vehicle, pt orb.Point) (*geofences.Feature, bool) {
	m := v.memoAt(pt)
	if !m.zoneKnown {
		m.zone, m.inZone = e.places.ZoneAt(pt)
		m.zoneKnown = true
	}
	return m.zone, m.inZone
}

// batchStart is the time of a batch's first reading (its send time when it has none).
func batchStart(b *wire.Batch) time.Time {
	t := b.SentAt.Time
	earlier := func(x wire.Time) {
		if !x.IsZero() && (t.IsZero() || x.Before(t)) {
			t = x.Time
		}
	}
	if len(b.Tacho) > 0 {
		earlier(b.Tacho[0].T)
	}
	if len(b.GPS) > 0 {
		earlier(b.GPS[0].T)
	}
	if len(b.Sound) > 0 {
		earlier(b.Sound[0].T)
	}
	if len(b.Service) > 0 {
		earlier(b.Service[0].T)
	}
	if len(b.Door) > 0 {
		earlier(b.Door[0].T)
	}
	return t
}
