// Package profile is the legal profile of a municipality (docs/profile.md): every number, article and
// period the rules apply, as data. A profile is a YAML file validated on load with errors that
// name the key; the Piúma profile is built in, so the monitor runs without a file.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // America/Sao_Paulo on machines without zoneinfo

	"go.yaml.in/yaml/v3"

	"github.com/trenzinho/trenzinho/profiles"
)

// Piuma returns the built-in profile of Piúma-ES (Lei 2.277/2018).
func Piuma() *Profile {
	p, err := Parse(PiumaYAML(), "piuma.yaml (built in)")
	if err != nil {
		panic("profile: built-in piuma.yaml is invalid: " + err.Error())
	}
	return p
}

// PiumaYAML returns the text of the built-in profile.
func PiumaYAML() []byte {
	b, err := profiles.Files.ReadFile("piuma.yaml")
	if err != nil {
		panic("profile: built-in piuma.yaml missing: " + err.Error())
	}
	return b
}

// Profile is one municipality's legal profile.
type Profile struct {
	ID           string `yaml:"id"`
	Municipality string `yaml:"municipality"`
	State        string `yaml:"state"`
	FiscalOrgan  string `yaml:"fiscal_organ"`
	Law          Law    `yaml:"law"`
	TimeZone     string `yaml:"timezone"`
	Version      string `yaml:"version"`

	Holidays   Holidays   `yaml:"holidays"`
	FiscalUnit FiscalUnit `yaml:"fiscal_unit"`

	Speed          Speed          `yaml:"speed"`
	ServiceHours   ServiceHours   `yaml:"service_hours"`
	InService      InService      `yaml:"in_service"`
	Sensitive      Sensitive      `yaml:"sensitive"`
	Boarding       Boarding       `yaml:"boarding"`
	Noise          Noise          `yaml:"noise"`
	Route          Route          `yaml:"route"`
	Parked         Parked         `yaml:"parked"`
	TelemetryFault TelemetryFault `yaml:"telemetry_fault"`
	Evidence       EvidencePolicy `yaml:"evidence"`
	GapTimeoutS    float64        `yaml:"gap_timeout_s"`

	Rules map[string]Rule `yaml:"rules"`
	// ManualInfractions are the infractions an agent observes in the street and notices by hand
	// (Art. 16, 25, 26, 46 II–IX, …), by id (optional).
	ManualInfractions map[string]ManualInfraction `yaml:"manual_infractions"`
	// DocumentExpired maps each kind of registry document to the article an expired one is
	// cited under (docs/rules.md, document_expired); optional: without documents the rule is not
	// evaluated.
	DocumentExpired DocumentExpired `yaml:"document_expired"`
	// Calendars are the school recess periods (optional).
	Calendars Calendars `yaml:"calendars"`
	// Conduct groups the rules that are one conduct: overlapping episodes of one vehicle
	// under rules of one group become one draft (the same act); different conducts are
	// separate drafts even under the same penalty (Art. 41 §3). Optional; by default the sound
	// rules form one group and every other rule is its own (DefaultConduct).
	Conduct    map[string][]string `yaml:"conduct"`
	Recidivism Recidivism          `yaml:"recidivism"`
	Suspension Suspension          `yaml:"suspension"`
	Cassacao   Cassacao            `yaml:"cassacao"`
	Defence    Defence             `yaml:"defence"`
	// Notification are the Art. 54 settings.
	Notification Notification `yaml:"notification"`
	// Payment is the period to pay a fine once the decision on the defence is notified.
	Payment Payment `yaml:"payment"`
	// Competence are the acts of the Executive an auto rests on (Art. 1 § 2º, 20 § 1º, 34, 57,
	// 59); without them no auto is issued.
	Competence Competence `yaml:"competence"`
	// Authority names the competent authority (Art. 57) as people read it.
	Authority Authority `yaml:"authority"`
	// Appeal is the appeal (recurso) against the decision on the defence (Lei nº 9.784/1999,
	// arts. 56–59, by analogy).
	Appeal Appeal `yaml:"appeal"`
	// PrescriptionYears is how long after the end of the facts a fine may still be imposed
	// (Decreto 20.910/1932, five years, which the STJ applies to municipal fines); 0: 5.
	PrescriptionYears int `yaml:"prescription_years"`
	// Complaints are the citizens' complaints settings (optional; docs/profile.md).
	Complaints Complaints `yaml:"complaints"`

	SignaturesRequired bool `yaml:"signatures_required"`

	loc *time.Location
}

// Law names the law the profile enforces.
type Law struct {
	Name    string `yaml:"name"`
	InForce bool   `yaml:"in_force"`
	Note    string `yaml:"note"`
	// EnactedOn is the date of the law ("YYYY-MM-DD"), when known (optional).
	EnactedOn string `yaml:"enacted_on"`
	// RevokedBy names the law that revoked this one (optional); a revoked law is not in force,
	// so in_force must then be false.
	RevokedBy string `yaml:"revoked_by"`
	// RevokedOn is the date of the revocation ("YYYY-MM-DD"), when known (optional; needs
	// revoked_by).
	RevokedOn string `yaml:"revoked_on"`
	// Articles are the texts of the law's provisions as published, by key: "23" (an article's
	// caput), "46.X" (an inciso), "20.II.d" (an alínea), "13.pu" (a parágrafo único), "54.§1"
	// (a paragraph). An auto quotes them verbatim (ArticleText); never paraphrase here.
	Articles map[string]string `yaml:"articles"`
	// Placeholders are the profile keys (dotted paths, e.g. "speed" or "noise.r2_m") whose
	// values this law does not set: the format requires them, so they hold engine defaults, and
	// nothing fined under this profile may rest on them as law (optional; each must name a key).
	Placeholders []string `yaml:"placeholders"`
}

// Holidays are the dates the profile treats as holidays: fixed days of the year, days relative
// to Easter (Easter by the algorithm rickar/cal uses, see Holiday), and single dates.
type Holidays struct {
	Fixed  []FixedHoliday  `yaml:"fixed"`
	Easter []EasterHoliday `yaml:"easter"`
	Dates  []DateHoliday   `yaml:"dates"`
	// ClosedDays are the pontos facultativos decreed, by date: no holiday, but no expediente
	// either, so no deadline ends on one (BusinessDay; optional).
	ClosedDays []ClosedDay `yaml:"closed_days"`
	// Confirmed are the years whose municipal holidays and closed days are confirmed complete
	// (HolidaysConfirmed; issue refusal holidays_unconfirmed).
	Confirmed []HolidaysConfirmation `yaml:"confirmed"`
}

// FixedHoliday is a holiday on the same day every year ("MM-DD").
type FixedHoliday struct {
	Day   string `yaml:"day"`
	Name  string `yaml:"name"`
	Scope string `yaml:"scope"` // national, state, municipal
	Since int    `yaml:"since"` // first year it applies (0: always)
}

// EasterHoliday is a holiday a number of days from Easter Sunday.
type EasterHoliday struct {
	Offset int    `yaml:"offset"`
	Name   string `yaml:"name"`
	Scope  string `yaml:"scope"`
}

// DateHoliday is a holiday on one date ("YYYY-MM-DD").
type DateHoliday struct {
	Date  string `yaml:"date"`
	Name  string `yaml:"name"`
	Scope string `yaml:"scope"`
}

// FiscalUnit is the municipal fiscal unit and its value in reais by date (Art. 44).
type FiscalUnit struct {
	Name   string      `yaml:"name"`
	Values []UnitValue `yaml:"values"`
	// ConfirmedBy names who confirmed the values with the Secretaria Municipal de Fazenda and
	// Act the act that publishes them (e.g. "Decreto nº 1.234/2026"). Until both are set the
	// values are illustrative and no auto may be issued (issue refusal ufmp_unconfirmed).
	ConfirmedBy string `yaml:"confirmed_by"`
	Act         string `yaml:"act"`
}

// Confirmed reports whether the fiscal unit's values are confirmed by someone and an act.
func (f FiscalUnit) Confirmed() bool {
	return strings.TrimSpace(f.ConfirmedBy) != "" && strings.TrimSpace(f.Act) != ""
}

// UnitValue is the value of the fiscal unit from a date on.
type UnitValue struct {
	From string `yaml:"from"`
	BRL  string `yaml:"brl"` // decimal string, e.g. "4.5123": money is never a float
	Note string `yaml:"note"`
}

// Speed are the speed rule's parameters.
type Speed struct {
	LimitKmh     float64 `yaml:"limit_kmh"`
	ToleranceKmh float64 `yaml:"tolerance_kmh"`
	ConfirmS     float64 `yaml:"confirm_s"`
	ClearS       float64 `yaml:"clear_s"`
}

// ServiceHours are the hours the service may run (Art. 29) and the grace for going to and from
// the garage.
type ServiceHours struct {
	Start  string  `yaml:"start"`
	End    string  `yaml:"end"`
	GraceM float64 `yaml:"grace_min"`
	// ConfirmS is how long a vehicle must be in service outside the hours before an episode opens.
	ConfirmS float64 `yaml:"confirm_s"`
	// ByDay gives some days of the week other hours (HoursOn); empty: Start and End every day.
	ByDay []DayHours `yaml:"by_day,omitempty"`
}

// InService says what "in service" means.
type InService struct {
	// MovingKmh is the speed above which a vehicle is moving.
	MovingKmh float64 `yaml:"moving_kmh"`
	// OutsideGarageMoving: outside the licensee's garage and moving is in service.
	OutsideGarageMoving bool `yaml:"outside_garage_moving"`
	// AtBoardingPoint: stopped at a boarding point is in service.
	AtBoardingPoint bool `yaml:"at_boarding_point"`
	// ServiceInputOverrides: the bridge's service switch, when present, decides.
	ServiceInputOverrides bool `yaml:"service_input_overrides"`
	// SwitchSuspect says when a vehicle whose service switch is off behaves as in service
	// (rule service_switch_suspect). The switch is the licensee's own device: it is not the
	// last word.
	SwitchSuspect SwitchSuspect `yaml:"switch_suspect"`
	// BoardingHoldsS: a boarding observed at a boarding point (stopped there with the passenger
	// door open) establishes service for this long after it, until the vehicle stands in its
	// licensee's garage or the service switch says off (default 1800 s).
	BoardingHoldsS float64 `yaml:"boarding_holds_s"`
}

// SwitchSuspect are the parameters of the service_switch_suspect alert.
type SwitchSuspect struct {
	// WindowS: a stop at a boarding point within this long before counts as "stopping at
	// boarding points" (default 900 s).
	WindowS float64 `yaml:"window_s"`
	// ConfirmS: the behaviour must last this long (default 120 s).
	ConfirmS float64 `yaml:"confirm_s"`
	// IsService: such behaviour is service — the rules that ask whether the vehicle is in
	// service (speed, hours, route, documents) judge it as in service despite the switch.
	IsService bool `yaml:"is_service"`
}

// Sensitive are the sensitive-zone rule's parameters (Art. 28).
type Sensitive struct {
	Categories     []string `yaml:"categories"`
	RadiusM        float64  `yaml:"radius_m"`
	EmissionDB     float64  `yaml:"emission_threshold_db"`
	EmissionWindow float64  `yaml:"emission_window_s"`
	ConfirmS       float64  `yaml:"confirm_s"`
	ClearS         float64  `yaml:"clear_s"`
	// PositionMargin is the position error allowed for in the accused's favour: a site is
	// within the radius only when distance + margin ≤ radius.
	PositionMargin PositionMargin `yaml:"position_margin"`
	// HolidayOpen are the categories whose opening hours apply on holidays as on any other day
	// (a hospital "24/7"); every other site is closed on a holiday unless its hours name PH.
	HolidayOpen []string `yaml:"holiday_open_categories"`
	// UnconfirmedSoundPenalty is the penalty cited for sound the agent has not confirmed as
	// music; "" (the default): none — the episode is an alert until the agent confirms the
	// music (verification music_audible), and is then fined as the rule maps it (Art. 45, VII).
	UnconfirmedSoundPenalty string `yaml:"unconfirmed_sound_penalty"`
}

// PositionMargin is the margin for GPS position error: FixedM when > 0, else PerHDOPM × the
// fix's HDOP (the profile's evidence.max_hdop when the fix has none).
type PositionMargin struct {
	PerHDOPM float64 `yaml:"per_hdop_m"`
	FixedM   float64 `yaml:"fixed_m"`
}

// MarginM returns the margin for a fix of the given HDOP (nil: unknown).
func (p *Profile) MarginM(hdop *float64) float64 {
	m := p.Sensitive.PositionMargin
	if m.FixedM > 0 {
		return m.FixedM
	}
	h := p.Evidence.MaxHDOP
	if hdop != nil && *hdop > 0 {
		h = *hdop
	}
	return m.PerHDOPM * h
}

// Calendars are date ranges that change what the rules presume.
type Calendars struct {
	// SchoolRecess are the school recess periods: school sites are closed on these days.
	SchoolRecess []DateRange `yaml:"school_recess"`
}

// DateRange is a range of calendar days, both inclusive ("YYYY-MM-DD").
type DateRange struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
	Name string `yaml:"name"`
}

// The calendars a rule or a deadline reads, by the names an episode's calendar_unconfirmed
// gives them.
const (
	CalendarSchoolRecess      = "calendars.school_recess"
	CalendarMunicipalHolidays = "holidays (municipais)"
)

// UnconfirmedCalendars lists the calendars the profile ships empty: no school recess period, no
// municipal holiday. An empty calendar works against the accused (a school "open" in January
// and July, a municipal holiday taken for a working day): while one is, an episode that depends
// on it grounds no auto.
func (p *Profile) UnconfirmedCalendars() []string {
	var out []string
	if len(p.Calendars.SchoolRecess) == 0 {
		out = append(out, CalendarSchoolRecess)
	}
	if !p.MunicipalHolidays() {
		out = append(out, CalendarMunicipalHolidays)
	}
	return out
}

// MunicipalHolidays reports whether the profile lists any municipal holiday.
func (p *Profile) MunicipalHolidays() bool {
	for _, h := range p.Holidays.Fixed {
		if h.Scope == "municipal" {
			return true
		}
	}
	for _, h := range p.Holidays.Easter {
		if h.Scope == "municipal" {
			return true
		}
	}
	for _, h := range p.Holidays.Dates {
		if h.Scope == "municipal" {
			return true
		}
	}
	return false
}

// SchoolRecess reports whether the calendar day of local (in the profile's zone) is in a
// school recess period.
func (p *Profile) SchoolRecess(local time.Time) bool {
	day := local.In(p.loc).Format(time.DateOnly)
	for _, r := range p.Calendars.SchoolRecess {
		if r.From <= day && day <= r.To {
			return true
		}
	}
	return false
}

// Boarding are the boarding-sound rule's parameters.
type Boarding struct {
	StoppedKmh float64 `yaml:"stopped_kmh"`
	DwellS     float64 `yaml:"dwell_s"`
	// DoorConfirmS is how long the passenger door must stand open, stopped outside every
	// demarcated boarding point in service, before boarding_outside_points opens an episode
	// (0: DefaultDoorConfirmS); DoorClearS how long it must be closed (or the vehicle moving)
	// to close it (0: DefaultDoorClearS).
	DoorConfirmS float64 `yaml:"door_confirm_s"`
	DoorClearS   float64 `yaml:"door_clear_s"`
}

// Defaults of boarding.door_confirm_s and boarding.door_clear_s.
const (
	DefaultDoorConfirmS = 10
	DefaultDoorClearS   = 5
)

// Noise are the NBR 10151 noise-limit parameters.
type Noise struct {
	Standard    string  `yaml:"standard"`
	WindowS     float64 `yaml:"window_s"`
	R1M         float64 `yaml:"r1_m"`
	R2M         float64 `yaml:"r2_m"`
	ToleranceDB float64 `yaml:"meter_tolerance_db"`
	ConfirmS    float64 `yaml:"confirm_s"`
	ClearS      float64 `yaml:"clear_s"`
	// DefaultArea is the area type applied outside every NBR zone (optional): without it,
	// noise_limit is not evaluated there. DefaultAreaReason must then say why that area is the
	// right one for the unzoned places.
	DefaultArea       string          `yaml:"default_area"`
	DefaultAreaReason string          `yaml:"default_area_reason"`
	DayStart          string          `yaml:"day_start"`
	NightStart        string          `yaml:"night_start"`
	RestDayNightEnd   string          `yaml:"rest_day_night_end"`
	Areas             map[string]Area `yaml:"areas"`
	// Fines is the law's fine table by dB above the limit, when it has one (optional; Piúma
	// fines noise_limit by rules.noise_limit.fine instead).
	Fines []NoiseFine `yaml:"fines"`
}

// NoiseFine is one row of a fine table by dB above the limit: it applies to an excess E with
// above_db_from < E ≤ above_db_to (no above_db_to: every excess above above_db_from, "acima
// de"). A row whose dB range the source text lost says range_lost and has neither bound: its
// amount is kept and its range is never guessed.
type NoiseFine struct {
	AboveDBFrom *float64 `yaml:"above_db_from"`
	AboveDBTo   *float64 `yaml:"above_db_to"`
	RangeLost   bool     `yaml:"range_lost"`
	Amount      float64  `yaml:"amount"`
	Unit        string   `yaml:"unit"`
	AsWritten   string   `yaml:"as_written"` // the row as the source text writes it
	Note        string   `yaml:"note"`
}

// FineFor returns the row of the fine table whose known dB range holds an excess of excessDB
// above the limit. It reports false when no row with a known range holds it — a row whose range
// was lost is never chosen.
func (n Noise) FineFor(excessDB float64) (NoiseFine, bool) {
	for _, f := range n.Fines {
		if f.RangeLost || f.AboveDBFrom == nil {
			continue
		}
		if excessDB > *f.AboveDBFrom && (f.AboveDBTo == nil || excessDB <= *f.AboveDBTo) {
			return f, true
		}
	}
	return NoiseFine{}, false
}

// Area is an area type with its day and night limits in dB(A).
type Area struct {
	Name  string  `yaml:"name"`
	Day   float64 `yaml:"day"`
	Night float64 `yaml:"night"`
}

// Route are the route-deviation parameters.
type Route struct {
	CorridorM float64 `yaml:"corridor_m"`
	ConfirmS  float64 `yaml:"confirm_s"`
	ClearS    float64 `yaml:"clear_s"`
}

// Parked are the parked-on-public-road parameters.
type Parked struct {
	MinMinutes float64 `yaml:"min_minutes"`
	StoppedKmh float64 `yaml:"stopped_kmh"`
}

// TelemetryFault are the tachograph-fault parameters.
type TelemetryFault struct {
	TachoSilentS   float64 `yaml:"tacho_silent_s"`
	ConfirmS       float64 `yaml:"confirm_s"`
	GPSMinKmh      float64 `yaml:"gps_min_kmh"`
	MaxDisagreeKmh float64 `yaml:"max_disagree_kmh"`
	RequestDisc    bool    `yaml:"request_disc"`
}

// EvidencePolicy says which GPS samples may be evidence.
type EvidencePolicy struct {
	MaxHDOP float64 `yaml:"max_hdop"`
	// MaxGPSTachoDiffKmh: a GPS speed further than this from the tachograph's at the same time
	// is not evidence.
	MaxGPSTachoDiffKmh float64 `yaml:"max_gps_tacho_diff_kmh"`
	// MaxImpliedDiffKmh: a GPS speed further than this from the speed implied by the distance
	// and time to the previous fix is not evidence.
	MaxImpliedDiffKmh float64 `yaml:"max_implied_diff_kmh"`
}

// Rule is the legal mapping of a rule: the article it enforces and the penalty that fines it.
type Rule struct {
	Article    string  `yaml:"article"`
	Penalty    string  `yaml:"penalty"`
	Text       string  `yaml:"text"`
	FineUFMP   float64 `yaml:"fine"`
	Infraction bool    `yaml:"infraction"`
	Notice     string  `yaml:"notice"`
	// Repeat is the fine on repeat of a rule whose first offence is a notificação preliminar
	// (Art. 41, I; its fine is 0), optional.
	Repeat *RepeatFine `yaml:"repeat"`
}

// RepeatFine is the fine of a warning-first rule on repeat.
type RepeatFine struct {
	Penalty string  `yaml:"penalty"` // e.g. "Art. 47"
	Fine    float64 `yaml:"fine"`    // in the fiscal unit
}

// ManualInfraction is an infraction the monitor does not measure: an agent observes it and
// writes the notice by hand. The penalty calculus fines it as it fines a rule.
type ManualInfraction struct {
	Article string  `yaml:"article"` // the precept violated, e.g. "Art. 16"
	Penalty string  `yaml:"penalty"` // the article that fines it, e.g. "Art. 46, XII"
	Text    string  `yaml:"text"`    // the legal text of the infraction, pt-BR
	Fine    float64 `yaml:"fine"`    // in the fiscal unit (> 0)
	Notice  string  `yaml:"notice"`  // what the agent does besides the fine (optional)
}

// DocumentExpired are the parameters of the document_expired rule and its legal mapping per
// document kind.
type DocumentExpired struct {
	// ConfirmS is how long a vehicle must be in service with an expired document before an
	// episode opens; ClearS how long out of service (or with the document renewed) closes it.
	ConfirmS float64 `yaml:"confirm_s"`
	ClearS   float64 `yaml:"clear_s"`
	// CNHGraceDays is how many days after its expiry a CNH still lets its holder drive (CTB
	// Art. 162, V: driving with a CNH expired for more than 30 days): within it, an expired
	// CNH is shown but grounds no auto. Default 30; a negative value is an error.
	CNHGraceDays *int `yaml:"cnh_grace_days"`
	// Documents maps a document kind of the registry (licenca, csv, inspecao,
	// afericao_tacografo, cnh, atestado_medico, verificacao_dispositivo) to its article,
	// penalty, text and fine. A kind not listed is not judged.
	Documents map[string]Rule `yaml:"documents"`
}

// CNHGrace is document_expired.cnh_grace_days, 30 when not set (CTB Art. 162, V).
func (d *DocumentExpired) CNHGrace() int {
	if d.CNHGraceDays == nil {
		return 30
	}
	return *d.CNHGraceDays
}

// DocumentKinds are the document kinds document_expired.documents may map (the registry's).
var DocumentKinds = []string{"licenca", "csv", "inspecao", "afericao_tacografo", "cnh", "atestado_medico",
	"verificacao_dispositivo"}

// DocumentExpiredRule is the id of the rule whose legal mapping depends on the document kind.
const DocumentExpiredRule = "document_expired"

// RuleFor is the legal mapping of an episode of rule: for document_expired, the mapping of its
// document kind (detail); for every other rule, rules.<rule>. ok is false when the profile
// maps neither.
func (p *Profile) RuleFor(rule, detail string) (Rule, bool) {
	if rule == DocumentExpiredRule {
		r, ok := p.DocumentExpired.Documents[detail]
		return r, ok
	}
	r, ok := p.Rules[rule]
	return r, ok
}

// SoundConduct is the default conduct group of the sound rules: the same music near a school,
// at boarding and above the NBR limit is one act (one draft), whatever rules it breaks.
const SoundConduct = "som"

// RouteConduct is the default conduct group of route_deviation and rotation_conflict: running
// on another licensee's itinerary on its rotation day is one act, off the vehicle's own.
const RouteConduct = "itinerario"

// soundRules are the rules that judge the vehicle's sound (rules.RuleSensitiveZoneSound, …).
var soundRules = []string{"sensitive_zone_sound", "boarding_sound", "noise_limit"}

// ConductOf returns the conduct group of a rule: the conduct: group that lists it, else — with
// no conduct: key — SoundConduct for the sound rules, else the rule itself.
func (p *Profile) ConductOf(rule string) string {
	for _, name := range slices.Sorted(maps.Keys(p.Conduct)) {
		if slices.Contains(p.Conduct[name], rule) {
			return name
		}
	}
	if p.Conduct == nil && slices.Contains(soundRules, rule) {
		return SoundConduct
	}
	if p.Conduct == nil && (rule == "route_deviation" || rule == "rotation_conflict") {
		return RouteConduct
	}
	return rule
}

// Recidivism are the Art. 48 settings.
type Recidivism struct {
	Basis  string  `yaml:"basis"` // confirmed | issued
	Same   string  `yaml:"same"`  // article | any
	Factor float64 `yaml:"factor"`
	// WindowYears: an earlier fine counts only when it became final at most this many years
	// before the new fact (the law sets no period; Decreto nº 6.514/2008, art. 11, by
	// analogy: five years); 0: 5.
	WindowYears int `yaml:"window_years"`
}

// Window is recidivism.window_years, 5 when not set.
func (r Recidivism) Window() int {
	if r.WindowYears > 0 {
		return r.WindowYears
	}
	return 5
}

// Suspension are the Art. 52 settings.
type Suspension struct {
	MinDays int `yaml:"min_days"`
	MaxDays int `yaml:"max_days"`
}

// Cassacao are the Art. 53 III settings.
type Cassacao struct {
	WithinMonths int `yaml:"within_months"`
	MoreThan     int `yaml:"suspensions_more_than"`
}

// Defence are the Art. 55 settings.
type Defence struct {
	Days                  int  `yaml:"days"`
	ExcludeReceiptDay     bool `yaml:"exclude_receipt_day"`
	NextBusinessDay       bool `yaml:"next_business_day"`
	EditalFromPublication bool `yaml:"edital_from_publication"`
	// Where and to whom the accused files the defence (Art. 56), printed on the auto: the
	// authority (To), and at least one of a postal Address, an Email or a Portal (optional;
	// an auto without them says only "no órgão autuante").
	To      string `yaml:"to"`
	Address string `yaml:"address"`
	Email   string `yaml:"email"`
	Portal  string `yaml:"portal"`
}

// Notification are the Art. 54 settings.
type Notification struct {
	// EditalAfterAttempts is how many failed delivery attempts must be recorded before a
	// notice is published by edital (Art. 54, § 1º: "esgotados os meios"); 0: 2.
	EditalAfterAttempts int `yaml:"edital_after_attempts"`
	// Electronic: the municipality notifies by electronic means (a law of its own must allow
	// it); the notice is then delivered on the day the offender acknowledges it. In the
	// licensee's portal an issued auto is made available at once and the first opening by the
	// licensee's user is that acknowledgement (ciência; docs/process.md).
	Electronic bool `yaml:"electronic"`
	// ElectronicAct is the legal act that adopts the electronic notice (e.g. "Decreto
	// Municipal nº 123/2026"): required with Electronic, printed in the portal and the receipts.
	ElectronicAct string `yaml:"electronic_act"`
	// ElectronicDays is how many days an auto waits in the portal for its ciência; not opened
	// by then, it is delivered by the other means (Art. 54) and the case says so (0: 10, as
	// Lei nº 11.419/2006, art. 5º, § 3º counts the electronic summons).
	ElectronicDays int `yaml:"electronic_days"`
}

// ElectronicWindow is notification.electronic_days, 10 when not set.
func (n Notification) ElectronicWindow() int {
	if n.ElectronicDays > 0 {
		return n.ElectronicDays
	}
	return 10
}

// EditalAfter is notification.edital_after_attempts, 2 when not set.
func (n Notification) EditalAfter() int {
	if n.EditalAfterAttempts > 0 {
		return n.EditalAfterAttempts
	}
	return 2
}

// Payment is the period to pay a confirmed fine (Art. 51: "no prazo legal"; the law sets none).
type Payment struct {
	// Days after the notification of the decision (0: 30).
	Days int `yaml:"days"`
}

// Period is payment.days, 30 when not set.
func (p Payment) Period() int {
	if p.Days > 0 {
		return p.Days
	}
	return 30
}

// Authority is the competent authority that decides defences, appeals, suspensions,
// annulments and the inscription in dívida ativa (the role autoridade).
type Authority struct {
	// Title is how the role is named to people ("Autoridade Julgadora de Posturas"); empty:
	// "autoridade competente".
	Title string `yaml:"title"`
}

// Appeal is the appeal (recurso) against the decision on the defence: the law is silent, so
// Lei nº 9.784/1999 applies by analogy (art. 59: ten days from the notice of the decision; art.
// 56, § 1º: to the superior authority).
type Appeal struct {
	// Days to appeal from the notification of the decision (0: 10).
	Days int `yaml:"days"`
	// DecidedBy is the role the profile names as the superior authority that decides appeals
	// (Lei nº 9.784/1999, art. 56, § 1º): autoridade (default), held by another person than the
	// one who decided the defence and the one who issued the auto. Never admin, an IT role.
	DecidedBy string `yaml:"decided_by"`
	// To names the superior authority as people read it (optional).
	To string `yaml:"to"`
}

// Period is appeal.days, 10 when not set.
func (a Appeal) Period() int {
	if a.Days > 0 {
		return a.Days
	}
	return 10
}

// Role is appeal.decided_by, autoridade when not set.
func (a Appeal) Role() string {
	if a.DecidedBy != "" {
		return a.DecidedBy
	}
	return "autoridade"
}

// Complaints are the settings of citizens' complaints (monitor/complaints): where and when a
// complaint is matched against the telemetry, and how long the complainant's contact is kept.
type Complaints struct {
	// RadiusM: vehicles that came within this distance of the place are matched (0: 300).
	RadiusM float64 `yaml:"radius_m"`
	// WindowMin: the window searched is the complaint's time ± this many minutes (0: 15).
	WindowMin int `yaml:"window_min"`
	// ContactRetentionDays: the complainant's contact (personal data, LGPD) is erased this many
	// days after the complaint (0: 180).
	ContactRetentionDays int `yaml:"contact_retention_days"`
}

// Radius is complaints.radius_m, 300 when not set.
func (c Complaints) Radius() float64 {
	if c.RadiusM > 0 {
		return c.RadiusM
	}
	return 300
}

// Window is complaints.window_min as a duration, 15 min when not set.
func (c Complaints) Window() time.Duration {
	if c.WindowMin > 0 {
		return time.Duration(c.WindowMin) * time.Minute
	}
	return 15 * time.Minute
}

// ContactRetention is complaints.contact_retention_days as a duration, 180 days when not set.
func (c Complaints) ContactRetention() time.Duration {
	if c.ContactRetentionDays > 0 {
		return time.Duration(c.ContactRetentionDays) * 24 * time.Hour
	}
	return 180 * 24 * time.Hour
}

// Load reads and validates a profile file.
func Load(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return Parse(b, path)
}

// Parse decodes and validates a profile. Unknown keys are errors.
func Parse(b []byte, name string) (*Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return &p, nil
}

// RuleIDs lists the rules of docs/rules.md that a profile must map.
var RuleIDs = []string{"speed", "hours", "sensitive_zone_sound", "boarding_sound", "noise_limit",
	"route_deviation", "parked_public_road", "telemetry_fault"}

func (p *Profile) validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)))
	}
	req := func(key, v string) {
		if strings.TrimSpace(v) == "" {
			bad(key, "required")
		}
	}
	pos := func(key string, v float64) {
		if !(v > 0) {
			bad(key, "must be > 0, got %v", v)
		}
	}
	nonneg := func(key string, v float64) {
		if v < 0 {
			bad(key, "must be ≥ 0, got %v", v)
		}
	}
	clock := func(key, v string) {
		if _, err := ParseClock(v); err != nil {
			bad(key, "%v", err)
		}
	}
	req("id", p.ID)
	req("municipality", p.Municipality)
	req("law.name", p.Law.Name)
	date := func(key, v string) (time.Time, bool) {
		if v == "" {
			return time.Time{}, false
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			bad(key, "want YYYY-MM-DD, got %q", v)
			return time.Time{}, false
		}
		return d, true
	}
	enacted, haveEnacted := date("law.enacted_on", p.Law.EnactedOn)
	revoked, haveRevoked := date("law.revoked_on", p.Law.RevokedOn)
	if p.Law.RevokedOn != "" && strings.TrimSpace(p.Law.RevokedBy) == "" {
		bad("law.revoked_on", "set without law.revoked_by")
	}
	if haveEnacted && haveRevoked && revoked.Before(enacted) {
		bad("law.revoked_on", "%s is before law.enacted_on %s", p.Law.RevokedOn, p.Law.EnactedOn)
	}
	if p.Law.InForce && strings.TrimSpace(p.Law.RevokedBy) != "" {
		bad("law.in_force", "true, but law.revoked_by says the law was revoked (%s)", p.Law.RevokedBy)
	}
	for i, k := range p.Law.Placeholders {
		if !hasKey(reflect.ValueOf(p).Elem(), k) {
			bad(fmt.Sprintf("law.placeholders[%d]", i), "%q is not a key of this profile", k)
		}
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil || p.TimeZone == "" {
		bad("timezone", "unknown time zone %q", p.TimeZone)
	} else {
		p.loc = loc
	}
	for i, h := range p.Holidays.Fixed {
		if _, err := time.Parse("01-02", h.Day); err != nil {
			bad(fmt.Sprintf("holidays.fixed[%d].day", i), "want MM-DD, got %q", h.Day)
		}
	}
	for i, h := range p.Holidays.Dates {
		if _, err := time.Parse(time.DateOnly, h.Date); err != nil {
			bad(fmt.Sprintf("holidays.dates[%d].date", i), "want YYYY-MM-DD, got %q", h.Date)
		}
	}
	req("fiscal_unit.name", p.FiscalUnit.Name)
	for i, v := range p.FiscalUnit.Values {
		if _, err := time.Parse(time.DateOnly, v.From); err != nil {
			bad(fmt.Sprintf("fiscal_unit.values[%d].from", i), "want YYYY-MM-DD, got %q", v.From)
		}
		if f, err := strconv.ParseFloat(v.BRL, 64); err != nil || f <= 0 {
			bad(fmt.Sprintf("fiscal_unit.values[%d].brl", i), "want a positive decimal, got %q", v.BRL)
		}
	}
	pos("speed.limit_kmh", p.Speed.LimitKmh)
	nonneg("speed.tolerance_kmh", p.Speed.ToleranceKmh)
	nonneg("speed.confirm_s", p.Speed.ConfirmS)
	nonneg("speed.clear_s", p.Speed.ClearS)
	clock("service_hours.start", p.ServiceHours.Start)
	clock("service_hours.end", p.ServiceHours.End)
	nonneg("service_hours.grace_min", p.ServiceHours.GraceM)
	nonneg("service_hours.confirm_s", p.ServiceHours.ConfirmS)
	validateDayHours(p.ServiceHours, bad)
	pos("in_service.moving_kmh", p.InService.MovingKmh)
	pos("sensitive.radius_m", p.Sensitive.RadiusM)
	pos("sensitive.emission_threshold_db", p.Sensitive.EmissionDB)
	pos("sensitive.emission_window_s", p.Sensitive.EmissionWindow)
	for i, c := range p.Sensitive.Categories {
		if !slices.Contains([]string{"hospital", "health", "school", "library", "public_office", "church"}, c) {
			bad(fmt.Sprintf("sensitive.categories[%d]", i), "unknown category %q", c)
		}
	}
	pos("boarding.stopped_kmh", p.Boarding.StoppedKmh)
	pos("boarding.dwell_s", p.Boarding.DwellS)
	nonneg("boarding.door_confirm_s", p.Boarding.DoorConfirmS)
	nonneg("boarding.door_clear_s", p.Boarding.DoorClearS)
	pos("noise.window_s", p.Noise.WindowS)
	pos("noise.r1_m", p.Noise.R1M)
	pos("noise.r2_m", p.Noise.R2M)
	nonneg("noise.meter_tolerance_db", p.Noise.ToleranceDB)
	clock("noise.day_start", p.Noise.DayStart)
	clock("noise.night_start", p.Noise.NightStart)
	if p.Noise.RestDayNightEnd != "" {
		clock("noise.rest_day_night_end", p.Noise.RestDayNightEnd)
	}
	if len(p.Noise.Areas) == 0 {
		bad("noise.areas", "at least one area type")
	}
	for id, a := range p.Noise.Areas {
		pos("noise.areas."+id+".day", a.Day)
		pos("noise.areas."+id+".night", a.Night)
	}
	if p.Noise.DefaultArea != "" {
		if _, ok := p.Noise.Areas[p.Noise.DefaultArea]; !ok {
			bad("noise.default_area", "%q is not one of noise.areas", p.Noise.DefaultArea)
		}
		req("noise.default_area_reason", p.Noise.DefaultAreaReason)
	}
	nonneg("sensitive.position_margin.per_hdop_m", p.Sensitive.PositionMargin.PerHDOPM)
	nonneg("sensitive.position_margin.fixed_m", p.Sensitive.PositionMargin.FixedM)
	for i, c := range p.Sensitive.HolidayOpen {
		if !slices.Contains([]string{"hospital", "health", "school", "library", "public_office", "church"}, c) {
			bad(fmt.Sprintf("sensitive.holiday_open_categories[%d]", i), "unknown category %q", c)
		}
	}
	for i, r := range p.Calendars.SchoolRecess {
		key := fmt.Sprintf("calendars.school_recess[%d]", i)
		from, ok1 := date(key+".from", r.From)
		to, ok2 := date(key+".to", r.To)
		if !ok1 || !ok2 {
			bad(key, "from and to are required (YYYY-MM-DD)")
		} else if to.Before(from) {
			bad(key+".to", "%s is before from %s", r.To, r.From)
		}
	}
	nonneg("in_service.switch_suspect.window_s", p.InService.SwitchSuspect.WindowS)
	nonneg("in_service.switch_suspect.confirm_s", p.InService.SwitchSuspect.ConfirmS)
	nonneg("in_service.boarding_holds_s", p.InService.BoardingHoldsS)
	if p.InService.BoardingHoldsS == 0 {
		p.InService.BoardingHoldsS = 1800
	}
	if p.InService.SwitchSuspect.WindowS == 0 {
		p.InService.SwitchSuspect.WindowS = 900
	}
	if p.InService.SwitchSuspect.ConfirmS == 0 {
		p.InService.SwitchSuspect.ConfirmS = 120
	}
	if g := p.DocumentExpired.CNHGraceDays; g != nil {
		nonneg("document_expired.cnh_grace_days", float64(*g))
	}
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(p.Conduct)) {
		for _, r := range p.Conduct[name] {
			if other, dup := seen[r]; dup {
				bad("conduct."+name, "rule %q is also in conduct.%s", r, other)
			}
			seen[r] = name
		}
	}
	lastTo, lastKey := -1.0, ""
	for i, f := range p.Noise.Fines {
		key := fmt.Sprintf("noise.fines[%d]", i)
		pos(key+".amount", f.Amount)
		req(key+".unit", f.Unit)
		if f.RangeLost {
			if f.AboveDBFrom != nil || f.AboveDBTo != nil {
				bad(key, "range_lost with above_db_from or above_db_to: a lost range has no bounds")
			}
			continue
		}
		if f.AboveDBFrom == nil {
			bad(key+".above_db_from", "required unless range_lost")
			continue
		}
		nonneg(key+".above_db_from", *f.AboveDBFrom)
		if *f.AboveDBFrom < lastTo {
			bad(key+".above_db_from", "%v overlaps the range of %s", *f.AboveDBFrom, lastKey)
		}
		if f.AboveDBTo != nil && *f.AboveDBTo <= *f.AboveDBFrom {
			bad(key+".above_db_to", "must be > above_db_from (%v), got %v", *f.AboveDBFrom, *f.AboveDBTo)
		}
		lastTo, lastKey = math.Inf(1), key // "acima de": every excess above
		if f.AboveDBTo != nil {
			lastTo = *f.AboveDBTo
		}
	}
	pos("route.corridor_m", p.Route.CorridorM)
	nonneg("route.confirm_s", p.Route.ConfirmS)
	nonneg("route.clear_s", p.Route.ClearS)
	nonneg("noise.confirm_s", p.Noise.ConfirmS)
	nonneg("noise.clear_s", p.Noise.ClearS)
	nonneg("telemetry_fault.confirm_s", p.TelemetryFault.ConfirmS)
	pos("parked.min_minutes", p.Parked.MinMinutes)
	pos("telemetry_fault.tacho_silent_s", p.TelemetryFault.TachoSilentS)
	pos("evidence.max_hdop", p.Evidence.MaxHDOP)
	pos("evidence.max_gps_tacho_diff_kmh", p.Evidence.MaxGPSTachoDiffKmh)
	pos("evidence.max_implied_diff_kmh", p.Evidence.MaxImpliedDiffKmh)
	pos("gap_timeout_s", p.GapTimeoutS)
	for _, id := range RuleIDs {
		r, ok := p.Rules[id]
		if !ok {
			bad("rules."+id, "missing")
			continue
		}
		req("rules."+id+".article", r.Article)
		req("rules."+id+".penalty", r.Penalty)
		nonneg("rules."+id+".fine", r.FineUFMP)
	}
	for _, id := range slices.Sorted(maps.Keys(p.Rules)) {
		r := p.Rules[id]
		if r.Repeat == nil {
			continue
		}
		req("rules."+id+".repeat.penalty", r.Repeat.Penalty)
		pos("rules."+id+".repeat.fine", r.Repeat.Fine)
		if r.FineUFMP != 0 {
			bad("rules."+id+".repeat", "only for a rule whose fine is 0 (a notificação preliminar first), got fine %v", r.FineUFMP)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.ManualInfractions)) {
		m, key := p.ManualInfractions[id], "manual_infractions."+id
		if _, clash := p.Rules[id]; clash || slices.Contains(RuleIDs, id) || id == DocumentExpiredRule {
			bad(key, "the id is also a rule's")
		}
		req(key+".article", m.Article)
		req(key+".penalty", m.Penalty)
		req(key+".text", m.Text)
		pos(key+".fine", m.Fine)
	}
	nonneg("document_expired.confirm_s", p.DocumentExpired.ConfirmS)
	nonneg("document_expired.clear_s", p.DocumentExpired.ClearS)
	for _, kind := range slices.Sorted(maps.Keys(p.DocumentExpired.Documents)) {
		key := "document_expired.documents." + kind
		if !slices.Contains(DocumentKinds, kind) {
			bad(key, "unknown document kind (want one of %s)", strings.Join(DocumentKinds, ", "))
			continue
		}
		r := p.DocumentExpired.Documents[kind]
		req(key+".article", r.Article)
		req(key+".penalty", r.Penalty)
		nonneg(key+".fine", r.FineUFMP)
	}
	if b := p.Recidivism.Basis; b != "confirmed" && b != "issued" {
		bad("recidivism.basis", "want confirmed or issued, got %q", b)
	}
	if s := p.Recidivism.Same; s != "article" && s != "any" {
		bad("recidivism.same", "want article or any, got %q", s)
	}
	if p.Suspension.MinDays <= 0 || p.Suspension.MaxDays < p.Suspension.MinDays {
		bad("suspension", "want 0 < min_days ≤ max_days, got %d–%d", p.Suspension.MinDays, p.Suspension.MaxDays)
	}
	if p.Defence.Days <= 0 {
		bad("defence.days", "must be > 0")
	}
	if p.Recidivism.WindowYears < 0 {
		bad("recidivism.window_years", "must be ≥ 0 (0: 5 years)")
	}
	if p.Appeal.Days < 0 {
		bad("appeal.days", "must be ≥ 0 (0: 10 days)")
	}
	if p.Notification.Electronic && strings.TrimSpace(p.Notification.ElectronicAct) == "" {
		bad("notification.electronic_act", "the electronic notice needs the legal act that adopts it")
	}
	if p.Notification.ElectronicDays < 0 {
		bad("notification.electronic_days", "must be ≥ 0 (0: 10 days)")
	}
	if r := p.Appeal.DecidedBy; r != "" && r != "autoridade" {
		bad("appeal.decided_by", "must be autoridade (the superior authority; admin is an IT role and decides no appeal), not %q", r)
	}
	if p.PrescriptionYears < 0 {
		bad("prescription_years", "must be ≥ 0 (0: 5 years)")
	}
	if c := p.Complaints; c.RadiusM < 0 || c.RadiusM > 5000 {
		bad("complaints.radius_m", "must be between 0 (300 m) and 5000, got %v", c.RadiusM)
	}
	if c := p.Complaints; c.WindowMin < 0 || c.WindowMin > 180 {
		bad("complaints.window_min", "must be between 0 (15 min) and 180, got %v", c.WindowMin)
	}
	if p.Complaints.ContactRetentionDays < 0 {
		bad("complaints.contact_retention_days", "must be ≥ 0 (0: 180 days)")
	}
	for _, k := range slices.Sorted(maps.Keys(p.Law.Articles)) {
		if _, ok := ParseCitation("Art. " + strings.ReplaceAll(k, ".", ", ")); !ok || strings.TrimSpace(p.Law.Articles[k]) == "" {
			bad("law.articles."+k, "want a key like 23, 46.X, 20.II.d, 13.pu or 54.§1 with the text as published")
		}
	}
	if len(p.Law.Articles) > 0 {
		// A profile that quotes its law quotes every provision it cites.
		for _, c := range p.citations() {
			if _, ok := p.ArticleText(c.cite); !ok {
				bad(c.key, "%q has no text in law.articles", c.cite)
			}
		}
	}
	errs = append(errs, p.fineProblems()...)
	errs = append(errs, p.validateClosedDays()...)
	errs = append(errs, p.validateHolidaysConfirmed()...)
	return errors.Join(errs...)
}

// hasKey reports whether a dotted key path names a key of the profile: a field of the format
// by its YAML name and, inside a mapping (rules, noise.areas), a key this profile has.
func hasKey(v reflect.Value, path string) bool {
	for seg := range strings.SplitSeq(path, ".") {
		switch v.Kind() {
		case reflect.Struct:
			found := false
			for i := range v.NumField() {
				name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
				if name != "" && name != "-" && name == seg {
					v, found = v.Field(i), true
					break
				}
			}
			if !found {
				return false
			}
		case reflect.Map:
			if v = v.MapIndex(reflect.ValueOf(seg)); !v.IsValid() {
				return false
			}
		default:
			return false
		}
	}
	return path != ""
}

// Location is the profile's time zone.
func (p *Profile) Location() *time.Location { return p.loc }

// Clock is a time of day in minutes since midnight.
type Clock int

// ParseClock parses "HH:MM" (00:00–24:00).
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("want HH:MM, got %q", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("want HH:MM, got %q", s)
	}
	return Clock(hh*60 + mm), nil
}

// MustClock parses a clock validated on load.
func MustClock(s string) Clock {
	c, err := ParseClock(s)
	if err != nil {
		panic(err)
	}
	return c
}
