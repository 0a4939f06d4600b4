// Package coach is the driver's coach: on the Pi, offline, it runs the monitor's own
// rules (package rules, with the legal profile and the geofences of the vehicle's signed
// configuration bundle) over the bridge's readings and warns the driver of what is about to
// happen — an open sensitive site ahead with the sound above the threshold, the speed nearing
// or passing the limit, the end of the service hours, leaving the authorised itinerary — before
// the monitor could open an episode of it.
//
// The coach decides nothing the law decides: every limit, site, opening hour and itinerary is
// the rules package's answer (rules.Engine, rules.SiteOpen, rules.MinutesToEnd,
// Vehicle.Holding); what the coach adds is when to warn (a lead distance, a speed margin,
// minutes before the end). Warnings are evidence of the licensee's diligence: each one is a
// Warning handed to the callback, which the bridge puts in its telemetry.
package coach

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paulmach/orb"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Kind is what a warning is about.
type Kind string

// Kinds of warning (the values of wire's warnings[].kind).
const (
	KindSiteSound Kind = "site_sound" // an open sensitive site ahead, sound above the threshold
	KindSpeedNear Kind = "speed_near" // speed within the margin below the limit
	KindSpeedOver Kind = "speed_over" // speed above the limit
	KindHoursEnd  Kind = "hours_end"  // the service hours end in a few minutes
	KindItinerary Kind = "itinerary"  // outside the authorised itinerary
	KindDocument  Kind = "document"   // a document of the vehicle or its licensee about to expire, or expired
)

// Kinds lists every kind, in the order of their urgency on the local page.
var Kinds = []Kind{KindSpeedOver, KindSiteSound, KindItinerary, KindSpeedNear, KindHoursEnd, KindDocument}

// Warning is one warning to the driver.
// Its JSON (the local page's) has the names of wire's warnings.
type Warning struct {
	T    time.Time `json:"t"` // device time of the reading that raised it
	Kind Kind      `json:"kind"`
	Rule string    `json:"rule"`           // the rule it anticipates (rules.RuleSpeed, …)
	Site string    `json:"site,omitempty"` // the sensitive site's geofence id (site_sound), else ""
	// Document is, for a document warning, whose and which: "vehicle:inspecao",
	// "licensee:licenca" (the local page's; the wire carries the kind of warning only).
	Document string `json:"document,omitempty"`
	// DistanceM is the distance to the site (site_sound), 0 otherwise.
	DistanceM float64 `json:"distance_m,omitempty"`
	// Value and Limit: dB(A) and the emission threshold (site_sound); km/h and the speed
	// limit (speed_near, speed_over); minutes left and the warning's minutes (hours_end);
	// metres from the nearest authorised route and its corridor (itinerary); days left
	// (negative: days since it expired) and the warning's days (document).
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
}

// Defaults of the bundle's warning settings (configbundle.Warnings) when it leaves them unset.
const (
	DefaultLeadDistanceM  = 300
	DefaultSpeedMarginKmh = 3
	// DefaultDocumentDays: a document is warned of this many days before it expires.
	DefaultDocumentDays = 15
)

// DefaultServiceEndMin are the warnings before the end of the service hours, in minutes.
var DefaultServiceEndMin = []int{20, 5}

// Timing of warnings.
const (
	// Repeat: a condition that persists is warned again this often.
	Repeat = time.Minute
	// rearm: a condition judged absent for this long is new when it returns. Absent means
	// that readings able to judge it found it false, from the first such reading to the last
	// one before it returns: a time without readings, or without what the condition needs (no
	// fresh GPS fix, the sound's emission window not full), counts neither way, so that sparse
	// readings (a GPS losing its fix) do not make a lasting condition new at every reading.
	rearm = 10 * time.Second
	// activeFor: a warning is shown on the local page for this long after its condition was
	// last seen.
	activeFor = 3 * time.Second
)

// Options configure a coach.
type Options struct {
	Vehicle string
	// Emit receives every warning, in order, from the goroutine that calls Apply (Run's). It
	// must not block: the outputs and the bridge's batch take the warning and return.
	Emit   func(Warning)
	Logger *slog.Logger
	// Queue bounds the readings waiting for Run (1024 by default); beyond it they are
	// dropped and counted: the coach never slows the bridge.
	Queue int
}

// Coach evaluates the readings of one vehicle. Its methods are safe for concurrent use.
type Coach struct {
	vehicle string
	emit    func(Warning)
	log     *slog.Logger
	queue   chan *wire.Batch
	dropped atomic.Int64

	mu       sync.Mutex
	conf     *conf // nil: no bundle, the coach is idle
	seq      uint64
	seen     map[key]*seenState
	sites    []rules.SiteNear
	lastT    time.Time
	nearSite time.Time // last reading with an open sensitive site within the lead distance
	trip     trip
	warnings int64
}

// trip follows the vehicle between its licensee's garage and its itineraries (see transit).
type trip struct {
	outbound bool    // left a garage and not yet inside the corridor of an itinerary since
	homeward bool    // left a corridor and closing on a garage since
	homeM    float64 // while homeward, the least distance to a garage since it left the corridor
}

// conf is a bundle ready to use.
type conf struct {
	version   uint64
	profile   *profile.Profile
	places    *geofences.Set
	engine    *rules.Engine
	lead      float64
	margin    float64
	endMin    []int // descending
	limiter   bool
	limitKmh  float64
	threshold float64
	docDays   int
	documents []configbundle.Document
	// garages and itineraries are the licensee's; transitM is the farthest a garage of the
	// licensee lies from the nearest of its itineraries' routes, plus the widest corridor:
	// the drive between them stays within it (see transit).
	garages, itineraries []*geofences.Feature
	transitM             float64
}

type key struct {
	kind Kind
	site string // a site_sound's site; a document's holder:kind
	n    int    // the minutes of an hours_end warning; a document's days left
}

type seenState struct {
	first, last, emitted time.Time
	// absentFrom and absentTo are the first and the last reading since last that judged the
	// condition absent (zero: none).
	absentFrom, absentTo time.Time
	w                    Warning
}

// New returns a coach with no configuration: it warns once Configure gave it a bundle.
func New(o Options) *Coach {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.Emit == nil {
		o.Emit = func(Warning) {}
	}
	return &Coach{vehicle: o.Vehicle, emit: o.Emit, log: o.Logger, queue: make(chan *wire.Batch, o.Queue), seen: map[key]*seenState{}}
}

// ErrNoProfile refuses a bundle whose profile cannot be read.
var ErrNoProfile = errors.New("coach: bundle profile unreadable")

// Configure puts a verified bundle in force: its profile, its geofences and its warning
// settings. A bundle that cannot be used leaves the one in force.
func (c *Coach) Configure(cb *configbundle.Bundle) error {
	p, err := profile.Parse([]byte(cb.Profile.YAML), "bundle:"+cb.Profile.ID)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoProfile, err)
	}
	var places *geofences.Set
	if len(cb.Geofences) > 0 {
		if places, err = geofences.Read(bytes.NewReader(cb.Geofences), "bundle.geojson"); err != nil {
			return fmt.Errorf("coach: bundle geofences: %w", err)
		}
	}
	w := cb.Settings.Warnings
	nc := &conf{
		version: cb.Version, profile: p, places: places, engine: rules.New(p, places),
		lead: w.LeadDistanceM, margin: w.SpeedMarginKmh, endMin: slices.Clone(w.ServiceEndMin),
		limiter: w.VolumeLimiter, limitKmh: p.Speed.LimitKmh, threshold: p.Sensitive.EmissionDB,
		docDays: w.DocumentExpiryDays, documents: slices.Clone(cb.Documents),
	}
	if nc.docDays <= 0 {
		nc.docDays = DefaultDocumentDays
	}
	if nc.lead <= 0 {
		nc.lead = DefaultLeadDistanceM
	}
	if nc.margin <= 0 {
		nc.margin = DefaultSpeedMarginKmh
	}
	if len(nc.endMin) == 0 {
		nc.endMin = slices.Clone(DefaultServiceEndMin)
	}
	slices.Sort(nc.endMin)
	slices.Reverse(nc.endMin)
	licensee := cb.Licensee
	if places != nil && licensee != "" {
		nc.garages, nc.itineraries = places.Garages(licensee), places.Itineraries(licensee)
		corridor := 0.0
		for _, it := range nc.itineraries {
			corridor = max(corridor, it.CorridorM)
		}
		for _, g := range nc.garages {
			if _, d := places.InCorridor(g.Bound().Center(), nc.itineraries); !math.IsInf(d, 0) {
				nc.transitM = max(nc.transitM, d+corridor)
			}
		}
	}
	nc.engine.SetRegistry(func(string) (rules.Registration, bool) {
		return rules.Registration{Licensee: licensee}, licensee != ""
	})
	c.mu.Lock()
	c.conf = nc
	clear(c.seen)
	c.trip = trip{}
	c.mu.Unlock()
	n := 0
	if places != nil {
		n = places.Len()
	}
	c.log.Info("coach configured", "config_version", cb.Version, "profile", cb.Profile.ID,
		"geofences", n, "lead_distance_m", nc.lead, "speed_margin_kmh", nc.margin, "volume_limiter", nc.limiter)
	return nil
}

// Observe hands the coach readings without waiting (Run evaluates them); when the queue is
// full they are dropped and counted.
func (c *Coach) Observe(b *wire.Batch) {
	select {
	case c.queue <- b:
	default:
		c.dropped.Add(1)
	}
}

// Run evaluates the observed readings until done is closed.
func (c *Coach) Run(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case b := <-c.queue:
			c.Apply(b)
		}
	}
}

// Apply evaluates readings of the vehicle now and emits the warnings they raise. b is not
// kept after Apply returns, nor are its times checked: they are the bridge's own.
func (c *Coach) Apply(b *wire.Batch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cf := c.conf
	if cf == nil {
		return
	}
	c.seq++
	in := *b
	in.V, in.Vehicle, in.Epoch, in.Seq = wire.Version, c.vehicle, "coach", c.seq
	// The coach warns whatever the bridge's time source: a system clock is no evidence for
	// the monitor, but it is the driver's now.
	in.Clock = wire.ClockRTC
	cf.engine.Apply(&in, time.Time{})
	// The coach keeps no episode: it only asks the engine what holds now.
	if _, err := cf.engine.Drain(); err != nil {
		c.log.Debug("coach engine drain", "err", err)
	}
	t := latest(b)
	if t.IsZero() {
		return
	}
	if t.After(c.lastT) {
		c.lastT = t
	}
	c.evaluate(cf, c.lastT)
}

// latest is the time of the newest reading of b.
func latest(b *wire.Batch) time.Time {
	var t time.Time
	later := func(x wire.Time) {
		if x.After(t) {
			t = x.Time
		}
	}
	for i := range b.GPS {
		later(b.GPS[i].T)
	}
	for i := range b.Tacho {
		later(b.Tacho[i].T)
	}
	for i := range b.Sound {
		later(b.Sound[i].T)
	}
	for i := range b.Service {
		later(b.Service[i].T)
	}
	for i := range b.Door {
		later(b.Door[i].T)
	}
	return t
}

// evaluate asks the rules what holds at t and warns.
func (c *Coach) evaluate(cf *conf, t time.Time) {
	e := cf.engine
	v := e.VehicleByID(c.vehicle)
	if v == nil {
		return
	}
	in, known := e.InService(v, t)
	outOfService := known && !in
	c.documents(cf, t)
	kmh, _, haveSpeed := v.SpeedAt(t)
	lat, lon, havePos := v.Position(t)

	// Speed (rule speed, Art. 23): the limit itself, not limit + tolerance where an episode
	// starts; out of service the law's speed rule does not apply.
	if haveSpeed {
		defer c.judged(t, KindSpeedOver, KindSpeedNear)
	}
	if haveSpeed && !outOfService {
		switch {
		case kmh > cf.limitKmh:
			c.raise(t, key{kind: KindSpeedOver}, Warning{Rule: rules.RuleSpeed, Value: kmh, Limit: cf.limitKmh})
		case kmh >= cf.limitKmh-cf.margin:
			c.raise(t, key{kind: KindSpeedNear}, Warning{Rule: rules.RuleSpeed, Value: kmh, Limit: cf.limitKmh})
		}
	}

	// Sensitive sites (rule sensitive_zone_sound, Art. 28): the sites open at t whose
	// protected radius lies within the lead distance — longer when faster than the limit, so
	// that the driver has the same time to react — while the sound reaches the threshold.
	// The volume limiter follows the sites alone, whatever the level: a limiter that let go
	// once the sound dropped would raise it again.
	if havePos {
		lead := cf.lead
		if haveSpeed && cf.limitKmh > 0 && kmh > cf.limitKmh {
			lead *= kmh / cf.limitKmh
		}
		c.sites = e.AppendOpenSites(c.sites[:0], lat, lon, lead, t)
		if len(c.sites) > 0 {
			c.nearSite = t
		}
		level, emits, soundKnown := e.Emitting(v, t)
		if soundKnown {
			defer c.judged(t, KindSiteSound)
		}
		if soundKnown && emits {
			for _, s := range c.sites {
				c.raise(t, key{kind: KindSiteSound, site: s.ID}, Warning{Rule: rules.RuleSensitiveZoneSound,
					Site: s.ID, DistanceM: math.Round(s.DistanceM), Value: level, Limit: cf.threshold})
			}
		}
	}

	// Itinerary (rule route_deviation, Art. 36 and 38): the rule's own condition on the last
	// position, before its confirmation opens an episode.
	if havePos {
		defer c.judged(t, KindItinerary)
		transit := c.transit(cf, lat, lon)
		if _, peak, ok := v.Holding(rules.RuleRouteDeviation); ok && !transit {
			c.raise(t, key{kind: KindItinerary}, Warning{Rule: rules.RuleRouteDeviation,
				Value: math.Round(peak), Limit: cf.profile.Route.CorridorM})
		}
	}

	// Service hours (rule hours, Art. 29): the nearest warning whose minutes have come.
	if !outOfService {
		if left, inside := rules.MinutesToEnd(cf.profile, t); inside {
			for i := len(cf.endMin) - 1; i >= 0; i-- {
				if m := cf.endMin[i]; left <= float64(m) {
					c.raise(t, key{kind: KindHoursEnd, n: m}, Warning{Rule: rules.RuleHours,
						Value: math.Ceil(left), Limit: float64(m)})
					break
				}
			}
		}
	}
}

// homeSlackM is how much farther from the garage than its least distance since leaving the
// itinerary a homeward vehicle may be (GPS scatter, a street that bends) and still be homeward.
const homeSlackM = 25

// transit reports whether the vehicle at lat, lon is on its way between its licensee's garage
// and its itinerary, where leaving the corridor is no deviation the coach warns of: the driver
// cannot serve the itinerary without driving to it (the monitor's route rule keeps its own
// confirmation time, route.confirm_s, which the drive is expected to stay under). It is in
// transit
//   - inside a garage of its licensee;
//   - outbound: from leaving the garage until it first enters the corridor of one of its
//     licensee's itineraries, while no farther from the routes than transitM (the farthest
//     garage's distance to them, plus the corridor);
//   - homeward: from leaving a corridor, as long as every position since is no farther from
//     the nearest garage than the least distance to it since it left (plus homeSlackM), and no
//     farther from the routes than transitM.
//
// A vehicle that drives away from both the itinerary and the garage is warned; one that turns
// away from the garage after leaving the corridor stays warned until it is back in a corridor
// or a garage. Without a garage or an itinerary of the licensee there is no transit.
func (c *Coach) transit(cf *conf, lat, lon float64) bool {
	if len(cf.garages) == 0 || len(cf.itineraries) == 0 {
		return false
	}
	pt := orb.Point{lon, lat}
	tr := &c.trip
	home := math.Inf(1)
	for _, g := range cf.garages {
		d := g.Distance(pt)
		if d == 0 {
			*tr = trip{outbound: true}
			return true
		}
		home = min(home, d)
	}
	inside, routeM := cf.places.InCorridor(pt, cf.itineraries)
	if inside {
		*tr = trip{homeward: true, homeM: math.Inf(1)}
		return false
	}
	if routeM > cf.transitM {
		*tr = trip{}
		return false
	}
	if tr.outbound {
		return true
	}
	if tr.homeward && home <= tr.homeM+homeSlackM {
		tr.homeM = min(tr.homeM, home)
		return true
	}
	tr.homeward = false
	return false
}

// documents warns of each document of the bundle that expires within the warning's days of
// the calendar day of t in the profile's time zone, or has expired: once a day (the key holds
// the days left), whether in service or not — a driver learns it best in the garage. The
// document_expired rule itself reads the registry, which the bridge does not have: the
// bundle's dates are the monitor's registry as of the bundle's issue.
func (c *Coach) documents(cf *conf, t time.Time) {
	if len(cf.documents) == 0 {
		return
	}
	y, m, d := t.In(cf.profile.Location()).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	for _, doc := range cf.documents {
		until, ok := doc.Day()
		if !ok {
			continue
		}
		left := int(until.Sub(today).Round(24*time.Hour) / (24 * time.Hour))
		if left > cf.docDays {
			continue
		}
		id := doc.Holder + ":" + doc.Kind
		c.raise(t, key{kind: KindDocument, site: id, n: left}, Warning{Rule: profile.DocumentExpiredRule,
			Document: id, Value: float64(left), Limit: float64(cf.docDays)})
	}
}

// judged notes that the readings at t could judge the conditions of kinds: those of them seen
// before and not raised at t are absent at t.
func (c *Coach) judged(t time.Time, kinds ...Kind) {
	for k, s := range c.seen {
		if s.last.Equal(t) || !slices.Contains(kinds, k.kind) {
			continue
		}
		if s.absentFrom.IsZero() {
			s.absentFrom = t
		}
		s.absentTo = t
	}
}

// raise notes that the condition of k holds at t and emits its warning when it is new (judged
// absent for rearm, see judged) or has lasted Repeat since it was last emitted. An hours_end
// warning is emitted once for its minutes, a document warning once for its days left.
func (c *Coach) raise(t time.Time, k key, w Warning) {
	w.T, w.Kind = t, k.kind
	s := c.seen[k]
	if s == nil {
		s = &seenState{}
		c.seen[k] = s
	}
	once := k.kind == KindHoursEnd || k.kind == KindDocument
	fresh := s.last.IsZero() || s.absentTo.Sub(s.absentFrom) >= rearm
	if once { // judged once a day by their own key (minutes, days left): a gap is enough
		fresh = s.last.IsZero() || t.Sub(s.last) > rearm
	}
	if fresh {
		s.first = t
	}
	s.last, s.w = t, w
	s.absentFrom, s.absentTo = time.Time{}, time.Time{}
	due := fresh || (!once && t.Sub(s.emitted) >= Repeat)
	if once && !s.emitted.IsZero() && t.Sub(s.emitted) < 24*time.Hour {
		due = false
	}
	if !due {
		return
	}
	s.emitted = t
	c.warnings++
	c.emit(w)
}

// State is what the coach shows now (the local page).
type State struct {
	// T is the device time of the newest reading (zero: none yet).
	T time.Time `json:"t,omitzero"`
	// ConfigVersion is the bundle in force (0: none: the coach is idle).
	ConfigVersion uint64 `json:"config_version"`
	// Active are the warnings whose condition held within the last seconds, most urgent first.
	Active []Active `json:"active"`
	// Limiter: the volume limiter should lower the sound now (an open sensitive site ahead,
	// and the bundle turned the limiter on).
	Limiter bool `json:"limiter"`
	// Dropped counts readings the coach had no time for.
	Dropped int64 `json:"dropped"`
	// Warnings counts the warnings emitted.
	Warnings int64 `json:"warnings"`
}

// Active is a warning in force, with what the page says of it.
type Active struct {
	Warning
	SiteName     string `json:"site_name,omitempty"`
	SiteCategory string `json:"site_category,omitempty"`
	// Text is the warning in Portuguese, big on the page: "ESCOLA A 180 m — ABAIXE O SOM".
	Text string `json:"text"`
}

// State returns the warnings in force at the newest reading.
func (c *Coach) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := State{T: c.lastT, Dropped: c.dropped.Load(), Warnings: c.warnings, Active: []Active{}}
	cf := c.conf
	if cf == nil {
		return st
	}
	st.ConfigVersion = cf.version
	st.Limiter = cf.limiter && !c.nearSite.IsZero() && c.lastT.Sub(c.nearSite) <= activeFor
	for k, s := range c.seen {
		if c.lastT.Sub(s.last) > activeFor {
			// Keep the map bounded: an hours_end key is one per warning minutes; a document's
			// (one per days left) is kept a day, so that a coach idle overnight does not warn
			// twice for the same day.
			if k.kind != KindHoursEnd && (c.lastT.Sub(s.last) > 24*time.Hour || k.kind != KindDocument && c.lastT.Sub(s.last) > time.Hour) {
				delete(c.seen, k)
			}
			continue
		}
		a := Active{Warning: s.w}
		if k.kind == KindSiteSound && cf.places != nil {
			if f, ok := cf.places.Feature(k.site); ok {
				a.SiteName, a.SiteCategory = f.Name, string(f.Category)
			}
		}
		a.Text = Text(a)
		st.Active = append(st.Active, a)
	}
	slices.SortFunc(st.Active, func(a, b Active) int {
		if d := slices.Index(Kinds, a.Kind) - slices.Index(Kinds, b.Kind); d != 0 {
			return d
		}
		return int(a.DistanceM - b.DistanceM)
	})
	return st
}
