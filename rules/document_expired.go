package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// documentRule flags a vehicle in service with an expired document of the registry (docs/rules.md,
// document_expired): the current document of each kind of the vehicle and of its licensee
// (licence, CSV, inspection, tachograph verification), the verification of each of its devices
// and — when the tachograph reports a card that names a registered driver — the driver's CNH
// (validity, or a category that does not cover the vehicle's) and medical certificate. What is
// expired is registry.Store.ExpiredFor's answer, judged on the calendar day of each reading.
//
// Each expired item has its own detector and one episode, from the first in-service reading
// after expiry (held for document_expired.confirm_s) until the item is renewed in the registry:
// not submitting the vehicle to inspection (Art. 45, IV) is one omission, not one per trip. When
// the vehicle leaves service the episode pauses (closed as out_of_service, so that it can be
// drafted) and the next in-service reading reopens it — later service periods are addenda of its
// draft, never new drafts. A renewal closes it as cleared (after document_expired.clear_s when in
// service). A CNH expired for at most document_expired.cnh_grace_days (30: CTB Art. 162, V makes
// driving an infraction with the CNH "vencida há mais de trinta dias") is judged apart, as an
// alert that grounds no auto; after the grace its own episode grounds one. The episode cites the article, penalty and fine the profile
// maps the item's kind to (document_expired.documents); a kind the profile does not map is not
// judged, and so is a vehicle the registry does not know. The value is the number of days
// since the item's last valid day; the episode carries the item (Episode.Document).
type documentRule struct{}

func (documentRule) id() string { return profile.DocumentExpiredRule }

const (
	// docMaxGap: an omission lasts until the document is renewed; only a month's silence
	// breaks the run (a vehicle out of use).
	docMaxGap       = 30 * 24 * time.Hour
	docEvidenceStep = 30 * time.Second
	// cardFresh is how long a driver card the tachograph reported counts as the card in the
	// tachograph: some tachographs send the card only in some frames (Stoneridge's DIN1).
	cardFresh = 10 * time.Minute
	// docDetectorPrefix starts the key of every detector of the rule in Vehicle.Detectors.
	docDetectorPrefix = profile.DocumentExpiredRule + "."
)

// docCache is the vehicle's expired items for one day and card, so that the registry is asked
// once per batch, day and card rather than once per reading. Apply resets it on every batch, so
// that registry edits apply from the next batch on.
type docCache struct {
	ok    bool
	day   registry.Date
	card  string
	items []registry.Expiry
}

func (documentRule) observe(e *Engine, v *Vehicle, r *reading) {
	p := &e.profile.DocumentExpired
	if len(p.Documents) == 0 {
		return
	}
	if r.Tacho == nil && (r.GPS == nil || !r.Evidence) && r.Service == nil {
		return
	}
	if v.expired == nil && !v.hasDocDetectors() {
		return
	}
	in, known := e.InService(v, r.T)
	if !known {
		return
	}
	var items []registry.Expiry
	if v.expired != nil {
		items = v.expiredAt(e, r.T)
	}
	lat, lon, _ := v.position(r.T)
	prm := params{Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: docMaxGap, MaxPending: 256}

	current := e.docKeys[:0]
	for i := range items {
		item := items[i]
		m, mapped := p.Documents[string(item.Document)]
		if !mapped {
			continue
		}
		slug := docSlug(&item)
		grace := item.Document == registry.DocCNH && item.Problem != registry.ProblemCategory && -item.DaysLeft <= p.CNHGrace()
		if grace {
			slug += "-prazo"
		}
		key := docDetectorPrefix + slug
		current = append(current, key)
		days := 0.0
		if item.DaysLeft < 0 {
			days = float64(-item.DaysLeft)
		}
		d := v.detector(key)
		if !in {
			// Out of service: the episode pauses; a run not yet confirmed is forgotten.
			if ep := v.episode(d.EpisodeID); ep != nil {
				if ep.End == nil {
					// Out of service for the clearing time: paused from the first reading
					// out of service (a short stop does not pause it).
					if d.ClearStart.IsZero() {
						d.ClearStart = r.T
					}
					if r.T.Sub(d.ClearStart) >= prm.Clear {
						d.close(v, ep, d.ClearStart, ClosedOutOfService, nil)
						d.ClearStart = time.Time{}
					}
				}
			} else {
				d.step(v, key, prm, sample{T: r.T, Lat: lat, Lon: lon}, nil)
			}
			continue
		}
		var ev evidence
		if d.LastEvidence.IsZero() || r.T.Sub(d.LastEvidence) >= docEvidenceStep || d.EpisodeID == "" && len(d.Pending) == 0 {
			ev = readingEvidence(r, kindOf(r), days, "dias")
			if lat != 0 || lon != 0 {
				ev = ev.at(lat, lon)
			}
			d.LastEvidence = r.T
		}
		if !d.RunStart.IsZero() && d.PeakLat == 0 && d.PeakLon == 0 && (lat != 0 || lon != 0) {
			// The value hardly changes, so the "peak" is where the run began; when no position
			// was known there, the first one known stands for it.
			d.Peak = math.Inf(-1)
		}
		if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil && item.Document == registry.DocInspecao {
			// The date the organ set may pass, or a justification be approved, while the
			// episode lasts.
			if v.judgeInspection(e, ep, r.T) {
				v.changed(ep, nil, EventUpdate)
			}
		}
		d.step(v, key, prm, sample{T: r.T, Cond: true, Value: days, Lat: lat, Lon: lon, Evidence: ev},
			func(start time.Time) *Episode {
				_, source, ok := v.SpeedAt(r.T)
				if !ok {
					source = "clock"
				}
				ep := e.newEpisode(v, profile.DocumentExpiredRule, start, "dias", 0, 0, source)
				ep.ID = EpisodeID(v.ID, profile.DocumentExpiredRule, start) + "." + slug
				ep.Article, ep.Penalty = m.Article, m.Penalty
				if !m.Infraction {
					ep.noGround(noteAlertOnly)
				}
				if grace {
					ep.noGround(fmt.Sprintf("CNH vencida há %d dias, dentro do prazo de %d dias (CTB, Art. 162, V)", -item.DaysLeft, p.CNHGrace()))
				}
				e.groundService(v, r.T, ep)
				if item.Document == registry.DocInspecao {
					v.judgeInspection(e, ep, r.T)
				}
				ep.Detail = string(item.Document)
				doc := item
				ep.Document = &doc
				return ep
			})
	}
	e.docKeys = current

	// The detectors of items no longer expired, or of every item out of service, see a false
	// sample: their episodes close after the clearing time.
	stale := e.docStale[:0]
	for key := range v.Detectors {
		if strings.HasPrefix(key, docDetectorPrefix) && !slices.Contains(current, key) {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	for _, key := range stale {
		d := v.Detectors[key]
		if ep := v.episode(d.EpisodeID); ep != nil && ep.End != nil && *ep.Closed != ClosedCleared {
			// Renewed while the episode was paused: it ends where it paused.
			reason := ClosedCleared
			ep.Closed = &reason
			v.changed(ep, nil, EventUpdate)
			delete(v.Detectors, key)
			continue
		}
		d.step(v, key, prm, sample{T: r.T, Lat: lat, Lon: lon}, nil)
		if d.EpisodeID == "" && d.RunStart.IsZero() {
			delete(v.Detectors, key) // nothing left to remember
		}
	}
	clear(stale)
	e.docStale = stale[:0]
}

// hasDocDetectors reports whether a document_expired detector of the vehicle exists. Asked on
// every reading of a vehicle the registry does not know, so a "none" is remembered until
// Vehicle.detector makes one (the only place that adds a detector to a vehicle).
func (v *Vehicle) hasDocDetectors() bool {
	if v.noDocDetectors {
		return false
	}
	for key := range v.Detectors {
		if strings.HasPrefix(key, docDetectorPrefix) {
			return true
		}
	}
	v.noDocDetectors = true
	return false
}

// expiredAt returns the vehicle's expired items on the calendar day of t (the profile's zone),
// with the driver card the tachograph reported within cardFresh of t.
func (v *Vehicle) expiredAt(e *Engine, t time.Time) []registry.Expiry {
	day := registry.DateOf(t.In(e.profile.Location()))
	card := ""
	if v.Card != "" && absDur(t.Sub(v.CardT)) <= cardFresh {
		card = v.Card
	}
	if !v.docs.ok || v.docs.day != day || v.docs.card != card {
		v.docs = docCache{ok: true, day: day, card: card, items: v.expired(card, t)}
	}
	return v.docs.items
}

// docSlug names an expired item in episode ids and detector keys: its kind, "-categoria" for
// a CNH category problem, and its subject ("inspecao.vehicle-PIU-003", "cnh.driver-D1").
func docSlug(x *registry.Expiry) string {
	s := string(x.Document)
	if x.Problem == registry.ProblemCategory {
		s += "-categoria"
	}
	return s + "." + string(x.Subject.Kind) + "-" + safeID(x.Subject.ID)
}

var safeIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// safeID keeps an id usable in a URL path: record ids are, device serials (free text) may not
// be, and then get their unsafe characters replaced and a short hash that keeps them apart.
func safeID(id string) string {
	if safeIDPattern.MatchString(id) {
		return id
	}
	var b strings.Builder
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	sum := sha256.Sum256([]byte(id))
	return b.String() + "_" + hex.EncodeToString(sum[:4])
}

// noteInspectionNotDue is the grounds note of an expired inspection the organ set no date for,
// or whose date has not passed, or was justified.
const noteInspectionNotDue = "Art. 45, IV só fundamenta auto depois de passada, sem submissão do veículo, a data de inspeção estabelecida pelo órgão (cadastro: inspeção solicitada em / agendada para), salvo justificativa formal aprovada"

// judgeInspection grounds an expired inspection's episode on Art. 45, IV only when the date the
// organ set for the inspection passed, before the day of t, without the vehicle submitted and
// without a formal justification approved ("nos prazos e datas estabelecidos, salvo
// justificativa formal aprovada"); otherwise the episode is an alert. It reports whether the
// episode's grounds changed.
func (v *Vehicle) judgeInspection(e *Engine, ep *Episode, t time.Time) bool {
	due := false
	if v.inspectionOverdue != nil {
		_, due = v.inspectionOverdue(registry.DateOf(t.In(e.profile.Location())))
	}
	has := strings.Contains(ep.GroundsNote, noteInspectionNotDue)
	switch {
	case !due && !has:
		ep.noGround(noteInspectionNotDue)
		return true
	case due && has:
		var rest []string
		for _, n := range strings.Split(ep.GroundsNote, "; ") {
			if n != noteInspectionNotDue {
				rest = append(rest, n)
			}
		}
		ep.GroundsNote = strings.Join(rest, "; ")
		if ep.GroundsNote == "" {
			ep.GroundsAuto = true
		}
		return true
	}
	return false
}
