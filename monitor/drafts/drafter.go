package drafts

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Pending is an episode not yet in a draft, with when it last changed (receive clock).
type Pending struct {
	Episode   rules.Episode
	UpdatedAt time.Time
}

// Kind is a kind of episode that makes drafts: a rule, and for a rule whose legal mapping
// depends on the episode's detail (document_expired), one detail; "" means every detail.
type Kind struct{ Rule, Detail string }

// Store is what the drafter reads and writes.
type Store interface {
	// UndraftedEpisodes returns the episodes of the given kinds that belong to no draft.
	UndraftedEpisodes(ctx context.Context, kinds []Kind) ([]Pending, error)
	Episode(ctx context.Context, id string) (*rules.Episode, error)
	BatchesBetween(ctx context.Context, vehicle string, from, to time.Time) ([]RawBatch, error)
	// VehicleEpisodes returns the vehicle's episodes of the given rules that overlap
	// [from, to] or are still open, oldest first (readings not needed).
	VehicleEpisodes(ctx context.Context, vehicle string, ruleIDs []string, from, to time.Time) ([]rules.Episode, error)
	// VehicleWarnings returns the vehicle's warnings of the driver's coach timed within
	// [from, to], oldest first.
	VehicleWarnings(ctx context.Context, vehicle string, from, to time.Time) ([]Warning, error)
	ChainHead(ctx context.Context) (seq int64, hash string, err error)
	InsertDraft(ctx context.Context, s Sealed, d *Draft) error
}

// Config configures a Drafter.
type Config struct {
	Store       Store
	Profile     *profile.Profile
	ProfileYAML []byte
	Places      *geofences.Set // may be nil
	Key         ed25519.PrivateKey
	Software    string
	Logger      *slog.Logger
	// Settle is how long after its last change an episode waits before it is drafted, so that
	// the data of the 2 minutes after it — part of the evidence — has arrived (150 s default).
	Settle time.Duration
	// Margin is the evidence window around the episodes (2 minutes).
	Margin time.Duration
	// VerificationWait is how long after its last change an episode that needs only the
	// agent's verification holds the draft of its conduct (24 h default): the agent's
	// verification recorded within it joins the same draft.
	VerificationWait time.Duration
	// VehicleKey finds a vehicle's registered key, to verify the signatures of the raw batches
	// when a draft is made (Draft.EvidenceSigned); nil: the keys of Registry, if any.
	VehicleKey batchsig.KeyLookup
	// Registry is the registry the draft takes the licensee, the vehicle, its devices and the
	// driver from when it is made; nil: none.
	Registry *registry.Store
}

// DefaultVerificationWait is Config.VerificationWait's default: a day for the agent to verify.
const DefaultVerificationWait = 24 * time.Hour

// Drafter makes drafts from closed episodes. Run it from one goroutine.
type Drafter struct {
	cfg   Config
	kinds []Kind
}

// NewDrafter returns a drafter for the rules the profile marks as infractions.
func NewDrafter(cfg Config) *Drafter {
	if cfg.Settle <= 0 {
		cfg.Settle = 150 * time.Second
	}
	if cfg.Margin <= 0 {
		cfg.Margin = 2 * time.Minute
	}
	if cfg.VerificationWait <= 0 {
		cfg.VerificationWait = DefaultVerificationWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.VehicleKey == nil {
		cfg.VehicleKey = batchsig.RegistryKeys(cfg.Registry) // nil without a registry
	}
	// Only the kinds that are infractions are read at all: alert-only episodes (an expired meter
	// calibration) would otherwise be read again on every run, forever.
	var kinds []Kind
	for id, r := range cfg.Profile.Rules {
		if r.Infraction && id != profile.DocumentExpiredRule {
			kinds = append(kinds, Kind{Rule: id})
		}
	}
	for kind, r := range cfg.Profile.DocumentExpired.Documents {
		if r.Infraction {
			kinds = append(kinds, Kind{Rule: profile.DocumentExpiredRule, Detail: kind})
		}
	}
	slices.SortFunc(kinds, func(a, b Kind) int { return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Detail, b.Detail)) })
	return &Drafter{cfg: cfg, kinds: kinds}
}

// Made is a draft the drafter stored.
type Made struct {
	Draft  Draft
	Sealed Sealed
}

// Kinds are the kinds of episodes the drafter reads: the infractions of the profile.
func (d *Drafter) Kinds() []Kind { return slices.Clone(d.kinds) }

// Run drafts every group of episodes that is ready at now (receive clock) and returns the
// drafts made. A group is the episodes of one vehicle that are one conduct and overlap in time
// (transitively); it is ready when all of them are closed and none changed within Settle.
//
// One draft per conduct, not per penalty (Lei 2.277/2018 Art. 41 §3: "Caso seja cometida mais
// de uma infração, aplicar-se-á cumulativamente as penalidades previstas para cada uma delas"):
// the same music near a school and above the NBR limit is one act, one draft (the profile's
// conduct: groups; by default the sound rules); hours and an expired licence overlapping are
// two conducts, two drafts, although Art. 47 fines both. Each expired document is its own
// conduct.
func (d *Drafter) Run(ctx context.Context, now time.Time) ([]Made, error) {
	pending, err := d.cfg.Store.UndraftedEpisodes(ctx, d.kinds)
	if err != nil {
		return nil, err
	}
	// Only infractions come back: d.kinds holds no alert-only kind (NewDrafter). An episode
	// that cannot ground an auto by itself never becomes a draft; one that needs only the
	// agent's verification holds its conduct's draft for VerificationWait, so that the same act
	// is not split into two drafts when the agent verifies it, and is then left out.
	pending = slices.DeleteFunc(pending, func(p Pending) bool { return !p.Episode.GroundsAuto && p.Episode.Needs == "" })
	var made []Made
	for _, g := range groups(pending, d.conduct) {
		ready := true
		for _, p := range g {
			if p.Episode.End == nil || now.Sub(p.UpdatedAt) < d.cfg.Settle ||
				!p.Episode.Draftable() && now.Sub(p.UpdatedAt) < d.cfg.VerificationWait {
				ready = false
				break
			}
		}
		g = slices.DeleteFunc(g, func(p Pending) bool { return !p.Episode.Draftable() })
		if !ready || len(g) == 0 {
			continue
		}
		m, err := d.make(ctx, g, now)
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			return made, err
		}
		made = append(made, *m)
	}
	return made, nil
}

var errSkip = errors.New("skip")

// conduct is the conduct an episode is part of: its rule's conduct group (profile.ConductOf),
// and for document_expired its item (kind and subject: each document is one omission).
func (d *Drafter) conduct(ep *rules.Episode) string {
	if ep.Rule == profile.DocumentExpiredRule {
		c := profile.DocumentExpiredRule + "-" + ep.Detail
		if x := ep.Document; x != nil {
			c += "-" + string(x.Subject.Kind) + "-" + x.Subject.ID
		}
		return c
	}
	return d.cfg.Profile.ConductOf(ep.Rule)
}

// groups splits pending episodes into the groups that make one draft each: same vehicle, same
// conduct, overlapping in time (an open episode overlaps everything after its start).
func groups(pending []Pending, conduct func(*rules.Episode) string) [][]Pending {
	type key struct{ vehicle, conduct string }
	by := map[key][]Pending{}
	var keys []key
	for _, p := range pending {
		k := key{p.Episode.Vehicle, conduct(&p.Episode)}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], p)
	}
	var out [][]Pending
	for _, k := range keys {
		eps := by[k]
		slices.SortFunc(eps, func(a, b Pending) int { return a.Episode.Start.Compare(b.Episode.Start.Time) })
		var cur []Pending
		var curEnd time.Time
		open := false
		for _, p := range eps {
			if len(cur) > 0 && !open && p.Episode.Start.After(curEnd) {
				out = append(out, cur)
				cur = nil
			}
			if len(cur) == 0 {
				curEnd, open = time.Time{}, false
			}
			cur = append(cur, p)
			if p.Episode.End == nil {
				open = true
			} else if p.Episode.End.After(curEnd) {
				curEnd = p.Episode.End.Time
			}
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
	}
	return out
}

func (d *Drafter) make(ctx context.Context, g []Pending, now time.Time) (*Made, error) {
	p := d.cfg.Profile
	var eps []rules.Episode
	for _, pe := range g {
		ep, err := d.cfg.Store.Episode(ctx, pe.Episode.ID)
		if err != nil {
			return nil, fmt.Errorf("drafts: episode %s: %w", pe.Episode.ID, err)
		}
		eps = append(eps, *ep)
	}
	first := eps[0]
	// The draft's penalty is that of its heaviest fact (one conduct is fined once).
	for _, ep := range eps[1:] {
		if ruleOf(p, &ep).FineUFMP > ruleOf(p, &first).FineUFMP {
			first = ep
		}
	}
	start, end := eps[0].Start.Time, eps[0].End.Time
	for _, ep := range eps[1:] {
		start = minTime(start, ep.Start.Time)
		end = maxTime(end, ep.End.Time)
	}
	warned, err := d.cfg.Store.VehicleWarnings(ctx, first.Vehicle, start.Add(-WarningWindow), end)
	if err != nil {
		return nil, fmt.Errorf("drafts: warnings of %s: %w", first.Vehicle, err)
	}
	draft := Draft{
		Vehicle: first.Vehicle, Penalty: first.Penalty, Unregistered: first.Unregistered,
		Municipality: p.Municipality + "-" + p.State, FiscalOrgan: p.FiscalOrgan, Law: p.Law.Name,
		FiscalUnit: p.FiscalUnit.Name, CreatedAt: wire.NewTime(now), Software: d.cfg.Software,
		ProfileID: p.ID, ProfileVer: p.Version,
	}
	for _, ep := range eps {
		start = minTime(start, ep.Start.Time)
		end = maxTime(end, ep.End.Time)
		draft.EpisodeIDs = append(draft.EpisodeIDs, ep.ID)
		if !slices.Contains(draft.Rules, ep.Rule) {
			draft.Rules = append(draft.Rules, ep.Rule)
		}
		if !slices.Contains(draft.Articles, ep.Article) {
			draft.Articles = append(draft.Articles, ep.Article)
		}
		draft.FineUFMP = max(draft.FineUFMP, ruleOf(p, &ep).FineUFMP)
		draft.Facts = append(draft.Facts, fact(p, &ep, d.cfg.Places, warned))
	}
	draft.Start, draft.End = wire.NewTime(start), wire.NewTime(end)
	draft.ID = DraftID(draft.Vehicle, draft.Penalty, d.conduct(&eps[0]), start)
	draft.Warnings = warnings(p, eps)

	// The raw batches reach back to the earliest warning a fact states, so that the bundle holds
	// the vehicle's signed batch that carried it: a verifier reads it from the device's record.
	from := start.Add(-d.cfg.Margin)
	for _, f := range draft.Facts {
		for _, w := range f.Warnings {
			from = minTime(from, w.T.Time)
		}
	}
	batches, err := d.cfg.Store.BatchesBetween(ctx, draft.Vehicle, from, end.Add(d.cfg.Margin))
	if err != nil {
		return nil, err
	}
	draft.EvidenceSigned = EvidenceSignatures(batches, d.cfg.VehicleKey)
	// The vehicle's telemetry faults of the evidence window, and those still open (a conflicting
	// replay of a batch of the period arrives later, timed by the receive clock): the data the
	// draft rests on was disputed, which the agent must weigh before issuing.
	faults, err := d.cfg.Store.VehicleEpisodes(ctx, draft.Vehicle, FaultRules, start.Add(-d.cfg.Margin), end.Add(d.cfg.Margin))
	if err != nil {
		return nil, err
	}
	draft.Warnings = append(draft.Warnings, faultWarnings(p, faults)...)
	d.register(&draft, eps, batches)
	bundle := Bundle{
		Format: BundleFormat, Draft: draft, Episodes: eps, Faults: faults, Batches: batches,
		Places:  d.places(eps, draft.Facts),
		Profile: ProfileRecord{ID: p.ID, Version: p.Version, YAML: string(d.cfg.ProfileYAML)},
	}
	if bundle.Batches == nil {
		bundle.Batches = []RawBatch{}
	}
	b, err := json.Marshal(&bundle)
	if err != nil {
		return nil, fmt.Errorf("drafts: bundle of %s: %w", draft.ID, err)
	}
	seq, prev, err := d.cfg.Store.ChainHead(ctx)
	if err != nil {
		return nil, err
	}
	sealed := Seal(draft.ID, seq+1, b, prev, d.cfg.Key)
	if err := d.cfg.Store.InsertDraft(ctx, sealed, &draft); err != nil {
		if errors.Is(err, ErrDrafted) {
			d.cfg.Logger.Warn("draft not made twice", "draft", draft.ID, "err", err)
			return nil, errSkip
		}
		return nil, err
	}
	d.cfg.Logger.Info("draft made", "draft", draft.ID, "vehicle", draft.Vehicle, "rules", draft.Rules, "episodes", len(eps), "batches", len(batches))
	return &Made{Draft: draft, Sealed: sealed}, nil
}

// DraftID is deterministic: the vehicle, the penalty, the conduct and the start of the first
// fact (two conducts under one penalty that start together are two drafts).
func DraftID(vehicle, penalty, conduct string, start time.Time) string {
	slug := strings.NewReplacer(" ", "", ",", "-", ".", "").Replace(strings.ToLower(penalty))
	c := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, conduct)
	return fmt.Sprintf("%s.%s.%s.%s", vehicle, slug, c, start.UTC().Format("20060102T150405.000Z"))
}

// places returns the GeoJSON of the sites and zones the episodes name, and of the streets and
// landmarks that name the facts' places.
func (d *Drafter) places(eps []rules.Episode, facts []Fact) []json.RawMessage {
	if d.cfg.Places == nil {
		return nil
	}
	var ids []string
	for _, ep := range eps {
		if ep.Site != nil {
			ids = append(ids, ep.Site.ID)
		}
	}
	for _, f := range facts {
		if pl := f.Place; pl != nil {
			ids = append(ids, pl.StreetID, pl.LandmarkID)
		}
	}
	var out []json.RawMessage
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		f, ok := d.cfg.Places.Feature(id)
		if !ok {
			continue
		}
		gf := geojson.NewFeature(f.Geometry)
		gf.Properties = f.Properties
		if b, err := json.Marshal(gf); err == nil {
			out = append(out, b)
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
