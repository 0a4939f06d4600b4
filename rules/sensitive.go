package rules

import (
	"slices"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
)

// sensitiveZoneRule flags sound emitted within the profile's radius (200 m) of hospitals and
// health units, schools, libraries, public offices and churches while they are open
// (Lei 2.277/2018 Art. 28; fined by Art. 45, VII).
//
// On each sound reading: the vehicle emits when the L_Aeq over sensitive.emission_window_s (5 s)
// at the meter is at or above sensitive.emission_threshold_db (70 dB(A)); Art. 28 forbids the
// emission itself, so no receptor estimate is needed. The site is the nearest one of the
// profile's categories — measured to a polygon's edge — that lies within the radius in the
// accused's favour (distance + margin ≤ radius, the margin sensitive.position_margin for the
// fix's HDOP) and is open at that local time (Engine.siteOpen). The condition must hold for
// sensitive.confirm_s and clears after sensitive.clear_s. Without geofences, a position or a
// full emission window, the reading is not judged.
//
// What the law presumes in the accused's favour never grounds an auto: a site whose opening
// hours are not on file is judged and shown, but the episode cannot ground an auto
// ("em horário de funcionamento" was not observed); nor can a site no agent verified
// (verified_by/verified_at), or sample data; and sound is an alert until the agent confirms it
// as music (groundSound). Among the sites in range, the episode names the one that grounds
// the most: a verified site with known hours before an unverified or unknown one.
type sensitiveZoneRule struct{}

func (sensitiveZoneRule) id() string { return RuleSensitiveZoneSound }

// RuleSensitiveZoneSound is the id of the rule.
const RuleSensitiveZoneSound = "sensitive_zone_sound"

// soundMaxGap is the longest silence of the meter that does not break a sound run.
const soundMaxGap = 10 * time.Second

func (sensitiveZoneRule) observe(e *Engine, v *Vehicle, r *reading) {
	if r.Sound == nil || r.Sound.LAeqDB == nil || e.places == nil {
		return
	}
	lat, lon, ok := v.position(r.T)
	if !ok {
		return
	}
	level, emits, known := e.emitting(v, r.T)
	if !known {
		return
	}
	p := e.profile.Sensitive
	margin := e.profile.MarginM(v.hdop(r.T))
	// Below the emission threshold the condition is false whatever the site: no lookup.
	var (
		site              *geofences.Feature
		dist              float64
		hoursKnown, found bool
	)
	if emits {
		site, dist, hoursKnown, found = e.openSensitiveSite(v, lat, lon, margin, r.T)
	}
	cond := emits && found
	d := v.detector(RuleSensitiveZoneSound)
	d.step(v, RuleSensitiveZoneSound, params{
		Confirm: seconds(p.ConfirmS), Clear: seconds(p.ClearS), MaxGap: soundMaxGap, MaxPending: 600,
	}, sample{T: r.T, Cond: cond, Value: level, Lat: lat, Lon: lon, Evidence: soundEvidence(r, *r.Sound.LAeqDB, lat, lon, true)},
		func(start time.Time) *Episode {
			ep := e.newEpisode(v, RuleSensitiveZoneSound, start, "dB(A)", p.EmissionDB, 0, soundSource)
			e.nameSite(ep, site, dist, margin, hoursKnown, r.T)
			return ep
		})
	// While open, the episode names the site that grounds the most, then the nearest.
	if ep := v.episode(d.EpisodeID); ep != nil && ep.End == nil && cond && ep.Site != nil {
		better := siteRank(site, hoursKnown) < siteRank2(ep.Site) ||
			siteRank(site, hoursKnown) == siteRank2(ep.Site) && dist+margin < ep.Site.MaxDistanceM
		if better {
			e.nameSite(ep, site, dist, margin, hoursKnown, r.T)
		}
	}
}

// Grounds notes of sensitive_zone_sound.
const (
	noteHoursUnknown = "horário de funcionamento do local não cadastrado"
	noteUnverified   = "local protegido não verificado por agente (verified_by/verified_at)"
	noteSample       = "local protegido de dados de exemplo"
)

// nameSite makes the site the one the episode names, and the episode's grounds follow it.
func (e *Engine) nameSite(ep *Episode, f *geofences.Feature, dist, margin float64, hoursKnown bool, t time.Time) {
	ep.Site = siteOf(f, dist)
	ep.Site.MarginM = margin
	ep.Site.MaxDistanceM = dist + margin
	ep.Site.HoursKnown = hoursKnown
	ep.grounded()
	if !e.profile.Rules[RuleSensitiveZoneSound].Infraction {
		ep.noGround(noteAlertOnly)
	}
	switch {
	case f.Source == "sample":
		ep.noGround(noteSample)
	case !f.Verified():
		ep.noGround(noteUnverified)
	}
	if !hoursKnown {
		ep.noGround(noteHoursUnknown)
	}
	ep.CalendarUnconfirmed = nil
	for _, c := range siteCalendars(e.profile, f) {
		ep.calendarUnconfirmed(c)
	}
	e.groundSound(ep)
}

// siteCalendars lists the empty calendars whether a sensitive site was open depends on: the
// school recess for a school; the municipal holidays for a site closed on holidays (its
// category is not holiday_open and its hours do not name PH). The site was found open, so the
// day is no known recess or holiday: only an empty calendar could make it one.
func siteCalendars(p *profile.Profile, f *geofences.Feature) []string {
	var out []string
	for _, c := range p.UnconfirmedCalendars() {
		switch c {
		case profile.CalendarSchoolRecess:
			if f.Category == geofences.CategorySchool {
				out = append(out, c)
			}
		case profile.CalendarMunicipalHolidays:
			if f.OpeningHours != nil && !slices.Contains(p.Sensitive.HolidayOpen, string(f.Category)) &&
				!strings.Contains(f.OpeningHours.String(), "PH") {
				out = append(out, c)
			}
		}
	}
	return out
}

// siteRank orders candidate sites: 0 verified with known hours, 1 otherwise.
func siteRank(f *geofences.Feature, hoursKnown bool) int {
	if f != nil && f.Verified() && f.Source != "sample" && hoursKnown {
		return 0
	}
	return 1
}

func siteRank2(s *Site) int {
	if s.Verified && s.Source != "sample" && s.HoursKnown {
		return 0
	}
	return 1
}

// openSensitiveSite returns the site of the profile's categories within its radius, in the
// accused's favour (distance + margin ≤ radius), that is open — or whose hours are unknown —
// at t: the best-grounded one (verified, hours known), then the nearest.
func (e *Engine) openSensitiveSite(v *Vehicle, lat, lon, margin float64, t time.Time) (f *geofences.Feature, dist float64, hoursKnown, found bool) {
	p := e.profile.Sensitive
	if margin >= p.RadiusM {
		return nil, 0, false, false
	}
	local := t.In(e.profile.Location())
	e.hits = e.places.AppendSensitiveWithinCached(e.hits[:0], orb.Point{lon, lat}, p.RadiusM-margin, &v.sites)
	best := 2
	for _, h := range e.hits {
		if !slices.Contains(p.Categories, string(h.Feature.Category)) || h.DistanceM+margin > p.RadiusM {
			continue
		}
		open, known := e.siteOpen(h.Feature, local)
		if !open {
			continue
		}
		if r := siteRank(h.Feature, known); r < best {
			f, dist, hoursKnown, found, best = h.Feature, h.DistanceM, known, true, r
		}
	}
	return f, dist, hoursKnown, found
}

// siteOpen reports whether a sensitive site is open at local time (Art. 28, "em horário de
// funcionamento"), and whether that is known: a school is closed on the profile's school recess
// days (calendars.school_recess); a site with no opening hours on file is taken as open but not
// known to be (the episode then cannot ground an auto); on a holiday a site is closed unless its
// hours name PH, or its category keeps its hours on holidays
// (sensitive.holiday_open_categories, e.g. a hospital "24/7").
//
// The answer holds for a whole local minute (opening hours are in minutes, recess and holidays
// in days), so it is kept per site for the minute it was asked in: most readings near a site
// come within the same minute as the last one.
func (e *Engine) siteOpen(f *geofences.Feature, local time.Time) (open, known bool) {
	_, offset := local.Zone()
	sec := local.Unix() + int64(offset)
	minute := sec / 60
	if sec < 0 && sec%60 != 0 {
		minute-- // floor: two minutes never share a key
	}
	if c, ok := e.siteHours[f]; ok && c.minute == minute {
		return c.open, c.known
	}
	open, known = SiteOpen(e.profile, f, local)
	if e.siteHours == nil {
		e.siteHours = map[*geofences.Feature]siteHoursAt{}
	}
	e.siteHours[f] = siteHoursAt{minute: minute, open: open, known: known}
	return open, known
}

// siteHoursAt is siteOpen's answer for a site in one local minute (minutes since 1970 in local
// wall-clock time).
type siteHoursAt struct {
	minute      int64
	open, known bool
}

// SiteOpen is Engine.siteOpen for any caller (the dashboard's open_now): whether a sensitive
// site is open at local time under the profile, and whether that is known.
func SiteOpen(p *profile.Profile, f *geofences.Feature, local time.Time) (open, known bool) {
	if f.Category == geofences.CategorySchool && p.SchoolRecess(local) {
		return false, true
	}
	if f.OpeningHours == nil {
		return true, false
	}
	isHoliday := func(day time.Time) bool { _, ok := p.Holiday(day); return ok }
	if isHoliday(local) && !slices.Contains(p.Sensitive.HolidayOpen, string(f.Category)) &&
		!strings.Contains(f.OpeningHours.String(), "PH") {
		return false, true
	}
	return f.OpeningHours.OpenAt(local, isHoliday), true
}

func siteOf(f *geofences.Feature, dist float64) *Site {
	if f == nil {
		return nil
	}
	return &Site{ID: f.ID, Kind: string(f.Kind), Name: f.Name, Category: string(f.Category), DistanceM: dist,
		Verified: f.Verified(), Source: f.Source, OpeningHours: openingHoursText(f.OpeningHours)}
}

func openingHoursText(o *geofences.OpeningHours) string {
	if o == nil {
		return ""
	}
	return o.String()
}
