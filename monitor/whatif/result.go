package whatif

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// Result is the comparison of the two judgements of a period.
type Result struct {
	From, To time.Time
	InForce  *Judgement
	Proposed *Judgement
	// Appear are the episodes only the proposed profile produces, Vanish those only the
	// profile in force does (matched by id: vehicle, rule and start), with their evidence.
	Appear, Vanish []Diff
	// Same counts the episodes both produce identically (same digest), Changed those both
	// produce (same id) with other content (another limit, end or peak).
	Same, Changed int
	Coverage      Coverage
	Stats         Stats
}

// Judgement is what one side produced.
type Judgement struct {
	Label       string
	Path        string
	ProfileID   string
	Version     string
	Episodes    []Episode // by start, then id
	Drafts      []drafts.Draft
	registry    *registry.Store
	rules       map[string]string // rule id → the profile's text of it
	loc         *time.Location
	byID        map[string]int
	draftedBy   map[string]int // episode id → index in Drafts
	readingsFor func(id string) ([]rules.Evidence, error)
}

// Episode is an episode as the report states it: without its readings (kept in the isolated
// store), with the digest of its JSON with them and the licensee of its day.
type Episode struct {
	rules.Episode
	Digest   string
	Licensee string
}

// Diff is an episode that one side produces and the other does not, with its evidence.
type Diff struct {
	Episode
	Side     string // the label of the side that produces it
	Drafted  bool   // it is in a draft of that side
	FineUFMP float64
	Readings []rules.Evidence
}

func newRun(s *Side) *Judgement {
	j := &Judgement{Label: s.Label, Path: s.Path, ProfileID: s.Profile.ID, Version: s.Profile.Version, registry: s.Registry,
		loc: s.Profile.Location(), byID: map[string]int{}, draftedBy: map[string]int{}, rules: map[string]string{}}
	for id, r := range s.Profile.Rules {
		j.rules[id] = r.Text
	}
	return j
}

// Digest is the SHA-256 of an episode's JSON with its readings, as the monitor's store returns
// it (the agent's verification left out: the engine never sets it). Two episodes with the same
// digest are the same judgement of the same evidence, to the last bit.
func Digest(e *rules.Episode) string {
	c := *e
	c.Verification = nil
	b, _ := json.Marshal(&c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// add keeps an episode read from the store (with its readings).
func (j *Judgement) add(e *rules.Episode) {
	ep := Episode{Episode: *e, Digest: Digest(e), Licensee: j.licenseeOf(e.Vehicle, e.Start.Time)}
	ep.Readings = nil
	j.byID[ep.ID] = len(j.Episodes)
	j.Episodes = append(j.Episodes, ep)
}

// licenseeOf is the vehicle's licensee on the day of t by the side's registry ("" unknown).
func (j *Judgement) licenseeOf(vehicle string, t time.Time) string {
	if j.registry == nil {
		return ""
	}
	v, ok := j.registry.Vehicle(vehicle)
	if !ok {
		return ""
	}
	return v.LicenseeOn(registry.DateOf(t.In(j.loc)))
}

// sort orders the episodes and indexes the drafts.
func (j *Judgement) sort() {
	slices.SortFunc(j.Episodes, func(a, b Episode) int {
		return cmp.Or(a.Start.Compare(b.Start.Time), cmp.Compare(a.ID, b.ID))
	})
	clear(j.byID)
	for k := range j.Episodes {
		j.byID[j.Episodes[k].ID] = k
	}
	slices.SortFunc(j.Drafts, func(a, b drafts.Draft) int {
		return cmp.Or(a.Start.Compare(b.Start.Time), cmp.Compare(a.ID, b.ID))
	})
	clear(j.draftedBy)
	for k, d := range j.Drafts {
		for _, id := range d.EpisodeIDs {
			j.draftedBy[id] = k
		}
	}
}

// Episode returns the side's episode of an id.
func (j *Judgement) Episode(id string) (*Episode, bool) {
	k, ok := j.byID[id]
	if !ok {
		return nil, false
	}
	return &j.Episodes[k], true
}

// DraftOf returns the draft that holds an episode.
func (j *Judgement) DraftOf(id string) (*drafts.Draft, bool) {
	k, ok := j.draftedBy[id]
	if !ok {
		return nil, false
	}
	return &j.Drafts[k], true
}

// FineUFMP is the sum of the fines of the side's drafts.
func (j *Judgement) FineUFMP() float64 {
	var s float64
	for _, d := range j.Drafts {
		s += d.FineUFMP
	}
	return s
}

// compare matches the episodes of both sides by id.
func (r *Result) compare() error {
	r.InForce.sort()
	r.Proposed.sort()
	diff := func(e *Episode, j *Judgement) (Diff, error) {
		d := Diff{Episode: *e, Side: j.Label}
		if dr, ok := j.DraftOf(e.ID); ok {
			d.Drafted, d.FineUFMP = true, dr.FineUFMP
		}
		if j.readingsFor != nil {
			rs, err := j.readingsFor(e.ID)
			if err != nil {
				return d, err
			}
			d.Readings = rs
		}
		return d, nil
	}
	for k := range r.InForce.Episodes {
		e := &r.InForce.Episodes[k]
		p, ok := r.Proposed.Episode(e.ID)
		switch {
		case !ok:
			d, err := diff(e, r.InForce)
			if err != nil {
				return err
			}
			r.Vanish = append(r.Vanish, d)
		case p.Digest == e.Digest:
			r.Same++
		default:
			r.Changed++
		}
	}
	for k := range r.Proposed.Episodes {
		e := &r.Proposed.Episodes[k]
		if _, ok := r.InForce.Episode(e.ID); !ok {
			d, err := diff(e, r.Proposed)
			if err != nil {
				return err
			}
			r.Appear = append(r.Appear, d)
		}
	}
	return nil
}
