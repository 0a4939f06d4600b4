package whatif

import "time"

// ReportJSON is the comparison as the dashboard's and the portal's pages show it
// (report.json of a background run): the totals and tables of resumo.csv, the episodes that
// appear and vanish (up to MaxListed of each; episodios.csv has all) and the coverage.
type ReportJSON struct {
	From     string      `json:"from"` // AAAA-MM-DD
	To       string      `json:"to"`   // the last day, included
	TimeZone string      `json:"time_zone"`
	InForce  SideJSON    `json:"in_force"`
	Proposed SideJSON    `json:"proposed"`
	Total    RowJSON     `json:"total"`
	Tables   []TableJSON `json:"tables"`
	Same     int         `json:"same"`
	Changed  int         `json:"changed"`
	// AppearCount and VanishCount are all of them; Appear and Vanish the first MaxListed.
	AppearCount int            `json:"appear_count"`
	VanishCount int            `json:"vanish_count"`
	Appear      []DiffJSON     `json:"appear"`
	Vanish      []DiffJSON     `json:"vanish"`
	Coverage    []CoverageJSON `json:"coverage"`
	Gaps        int            `json:"gaps"`
	GapHours    float64        `json:"gap_hours"`
	Files       []string       `json:"files"`
}

// MaxListed bounds the episodes that appear (and those that vanish) listed in the JSON report.
const MaxListed = 400

// SideJSON is one side's profile.
type SideJSON struct {
	Label   string `json:"label"`
	Profile string `json:"profile"`
	Version string `json:"version"`
}

// TallyJSON is Tally.
type TallyJSON struct {
	Episodes int     `json:"episodes"`
	Autos    int     `json:"autos"`
	UFMP     float64 `json:"ufmp"`
}

// RowJSON is Row.
type RowJSON struct {
	Key      string    `json:"key"`
	Label    string    `json:"label"`
	InForce  TallyJSON `json:"in_force"`
	Proposed TallyJSON `json:"proposed"`
}

// TableJSON is Table.
type TableJSON struct {
	Dimension string    `json:"dimension"`
	Title     string    `json:"title"`
	KeyTitle  string    `json:"key_title"`
	Note      string    `json:"note,omitempty"`
	Rows      []RowJSON `json:"rows"`
}

// DiffJSON is an episode that appears or vanishes.
type DiffJSON struct {
	ID       string     `json:"id"`
	Vehicle  string     `json:"vehicle"`
	Licensee string     `json:"licensee,omitempty"`
	Rule     string     `json:"rule"`
	Article  string     `json:"article,omitempty"`
	Start    time.Time  `json:"start"`
	End      *time.Time `json:"end,omitempty"`
	Peak     float64    `json:"peak"`
	Limit    float64    `json:"limit"`
	Unit     string     `json:"unit,omitempty"`
	Site     string     `json:"site,omitempty"`
	Drafted  bool       `json:"drafted"`
	FineUFMP float64    `json:"fine_ufmp"`
	Evidence int        `json:"evidence"`
	// Lat and Lon are where the episode peaked (the map of where the differences happen); both
	// zero when no position was known.
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
	// Readings are the first MaxReadingsListed readings of its evidence (evidencias.csv has them
	// all), so that the page opens each episode with what grounds it.
	Readings []ReadingJSON `json:"readings"`
}

// ReadingJSON is one reading of an episode's evidence.
type ReadingJSON struct {
	T     time.Time `json:"t"`
	Kind  string    `json:"kind"`
	Value float64   `json:"value"`
	Unit  string    `json:"unit,omitempty"`
	Lat   *float64  `json:"lat,omitempty"`
	Lon   *float64  `json:"lon,omitempty"`
}

// MaxReadingsListed bounds the readings of one episode in the report.
const MaxReadingsListed = 60

// CoverageJSON is a vehicle's coverage.
type CoverageJSON struct {
	Vehicle       string `json:"vehicle"`
	Unknown       bool   `json:"unknown"`
	Batches       int    `json:"batches"`
	Readings      int    `json:"readings"`
	HoursWithData int    `json:"hours_with_data"`
}

// Report is the comparison for the pages (ReportJSON).
func (r *Result) Report() ReportJSON {
	loc := r.InForce.loc
	if loc == nil {
		loc = time.UTC
	}
	tally := func(t Tally) TallyJSON { return TallyJSON(t) }
	row := func(x Row) RowJSON { return RowJSON{x.Key, x.Label, tally(x.InForce), tally(x.Proposed)} }
	out := ReportJSON{
		From: r.From.In(loc).Format(time.DateOnly), To: r.To.Add(-time.Nanosecond).In(loc).Format(time.DateOnly), TimeZone: loc.String(),
		InForce:  SideJSON{r.InForce.Label, r.InForce.ProfileID, r.InForce.Version},
		Proposed: SideJSON{r.Proposed.Label, r.Proposed.ProfileID, r.Proposed.Version},
		Total:    row(r.Total()), Same: r.Same, Changed: r.Changed, AppearCount: len(r.Appear), VanishCount: len(r.Vanish),
		Appear: []DiffJSON{}, Vanish: []DiffJSON{}, Coverage: []CoverageJSON{},
		Gaps: len(r.Coverage.Gaps), GapHours: r.Coverage.GapHours(), Files: append(append([]string{}, CSVFiles...), PDFFile),
	}
	for _, t := range r.Tables() {
		tj := TableJSON{Dimension: t.Dimension, Title: t.Title, KeyTitle: t.KeyTitle, Note: t.Note, Rows: []RowJSON{}}
		for _, x := range t.Rows {
			tj.Rows = append(tj.Rows, row(x))
		}
		out.Tables = append(out.Tables, tj)
	}
	diff := func(d Diff) DiffJSON {
		x := DiffJSON{ID: d.ID, Vehicle: d.Vehicle, Licensee: d.Licensee, Rule: d.Rule, Article: d.Article, Start: d.Start.Time,
			Peak: d.Peak, Limit: d.Limit, Unit: d.Unit, Drafted: d.Drafted, FineUFMP: d.FineUFMP, Evidence: d.Evidence,
			Lat: d.Lat, Lon: d.Lon, Readings: []ReadingJSON{}}
		for _, r := range d.Readings[:min(len(d.Readings), MaxReadingsListed)] {
			x.Readings = append(x.Readings, ReadingJSON{T: r.T.Time, Kind: r.Kind, Value: r.Value, Unit: r.Unit, Lat: r.Lat, Lon: r.Lon})
		}
		if d.End != nil {
			end := d.End.Time
			x.End = &end
		}
		if d.Site != nil {
			_, x.Site = siteOf(&d.Episode)
		}
		return x
	}
	for _, d := range r.Appear[:min(len(r.Appear), MaxListed)] {
		out.Appear = append(out.Appear, diff(d))
	}
	for _, d := range r.Vanish[:min(len(r.Vanish), MaxListed)] {
		out.Vanish = append(out.Vanish, diff(d))
	}
	for _, v := range r.Coverage.Vehicles {
		out.Coverage = append(out.Coverage, CoverageJSON{v.Vehicle, v.Unknown, v.Batches, v.Readings, v.HoursWithData})
	}
	return out
}
