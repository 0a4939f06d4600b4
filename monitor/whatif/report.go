package whatif

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// Tally is what one side produced under one key.
type Tally struct {
	Episodes int
	Autos    int // drafts of autos de infração
	UFMP     float64
}

// Row is one key of a table, both sides side by side.
type Row struct {
	Key, Label        string
	InForce, Proposed Tally
}

// Table is the result broken down by one dimension.
type Table struct {
	Dimension string // regra, permissionario, local, hora (the CSV's names)
	Title     string // pt-BR
	KeyTitle  string
	Rows      []Row
	// Note is what a reader must know to add the rows up (pt-BR), "" when they add up.
	Note string
}

// Labels of keys without a value.
const (
	noLicensee = "(não cadastrado)"
	noSite     = "(nenhum local sensível)"
)

// Total is the totals of both sides.
func (r *Result) Total() Row {
	row := Row{Key: "total", Label: "Total"}
	row.InForce.Episodes, row.Proposed.Episodes = len(r.InForce.Episodes), len(r.Proposed.Episodes)
	row.InForce.Autos, row.Proposed.Autos = len(r.InForce.Drafts), len(r.Proposed.Drafts)
	row.InForce.UFMP, row.Proposed.UFMP = r.InForce.FineUFMP(), r.Proposed.FineUFMP()
	return row
}

// Tables breaks the result down per rule, per licensee, per site and per hour of the day.
func (r *Result) Tables() []Table {
	loc := time.UTC
	if r.InForce.loc != nil {
		loc = r.InForce.loc
	}
	hour := func(t time.Time) (string, string) {
		h := t.In(loc).Hour()
		return fmt.Sprintf("%02d", h), fmt.Sprintf("%02dh–%02dh", h, (h+1)%24)
	}
	type dim struct {
		name, title, keyTitle, note string
		episode                     func(j *Judgement, e *Episode) (key, label string)
		draft                       func(j *Judgement, d *drafts.Draft) (keys []string, labels []string, fineKey string)
	}
	dims := []dim{
		{"regra", "Por regra", "Regra", "Um auto que cita mais de uma regra conta em cada uma; sua multa, só na primeira.",
			func(j *Judgement, e *Episode) (string, string) { return e.Rule, ruleLabel(j, e.Rule) },
			func(j *Judgement, d *drafts.Draft) ([]string, []string, string) {
				var labels []string
				for _, id := range d.Rules {
					labels = append(labels, ruleLabel(j, id))
				}
				fk := ""
				if len(d.Rules) > 0 {
					fk = d.Rules[0]
				}
				return d.Rules, labels, fk
			}},
		{"permissionario", "Por permissionário", "Permissionário", "",
			func(j *Judgement, e *Episode) (string, string) {
				if e.Licensee == "" {
					return "", noLicensee
				}
				return e.Licensee, e.Licensee
			},
			func(j *Judgement, d *drafts.Draft) ([]string, []string, string) {
				if d.Licensee == "" {
					return []string{""}, []string{noLicensee}, ""
				}
				return []string{d.Licensee}, []string{d.Licensee}, d.Licensee
			}},
		{"local", "Por local sensível", "Local", "",
			func(j *Judgement, e *Episode) (string, string) { return siteOf(e) },
			func(j *Judgement, d *drafts.Draft) ([]string, []string, string) {
				for _, id := range d.EpisodeIDs {
					if e, ok := j.Episode(id); ok && e.Site != nil {
						k, l := siteOf(e)
						return []string{k}, []string{l}, k
					}
				}
				return []string{""}, []string{noSite}, ""
			}},
		{"hora", "Por hora do dia (início)", "Hora", "",
			func(j *Judgement, e *Episode) (string, string) { return hour(e.Start.Time) },
			func(j *Judgement, d *drafts.Draft) ([]string, []string, string) {
				k, l := hour(d.Start.Time)
				return []string{k}, []string{l}, k
			}},
	}
	var out []Table
	for _, d := range dims {
		rows := map[string]*Row{}
		get := func(k, l string) *Row {
			row := rows[k]
			if row == nil {
				row = &Row{Key: k, Label: l}
				rows[k] = row
			}
			return row
		}
		for side, j := range []*Judgement{r.InForce, r.Proposed} {
			pick := func(row *Row) *Tally { return []*Tally{&row.InForce, &row.Proposed}[side] }
			for k := range j.Episodes {
				key, label := d.episode(j, &j.Episodes[k])
				pick(get(key, label)).Episodes++
			}
			for k := range j.Drafts {
				dr := &j.Drafts[k]
				keys, labels, fk := d.draft(j, dr)
				for n, key := range keys {
					row := get(key, labels[n])
					pick(row).Autos++
					if key == fk {
						pick(row).UFMP += dr.FineUFMP
					}
				}
			}
		}
		t := Table{Dimension: d.name, Title: d.title, KeyTitle: d.keyTitle, Note: d.note}
		for _, row := range rows {
			t.Rows = append(t.Rows, *row)
		}
		slices.SortFunc(t.Rows, func(a, b Row) int {
			if d.name == "hora" {
				return cmp.Compare(a.Key, b.Key)
			}
			// The largest change first, then the most episodes.
			da := abs(a.Proposed.Episodes - a.InForce.Episodes)
			db := abs(b.Proposed.Episodes - b.InForce.Episodes)
			return cmp.Or(cmp.Compare(db, da), cmp.Compare(b.InForce.Episodes+b.Proposed.Episodes, a.InForce.Episodes+a.Proposed.Episodes), cmp.Compare(a.Key, b.Key))
		})
		out = append(out, t)
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// ruleLabel names a rule by the profile's text of it.
func ruleLabel(j *Judgement, rule string) string {
	if j.rules != nil {
		if r, ok := j.rules[rule]; ok && r != "" {
			return rule + " — " + r
		}
	}
	return rule
}

func siteOf(e *Episode) (string, string) {
	if e.Site == nil || e.Site.ID == "" {
		return "", noSite
	}
	if e.Site.Name != "" {
		return e.Site.ID, e.Site.Name
	}
	return e.Site.ID, e.Site.ID
}

// Situations of an episode in the comparison (episodios.csv).
const (
	Appears  = "surge"      // only under the proposed profile
	Vanishes = "desaparece" // only under the profile in force
	Changed  = "alterado"   // under both, other content
	Same     = "igual"      // under both, identical
)

// Situation says how an episode of a side compares with the other side.
func (r *Result) Situation(e *Episode, side *Judgement) string {
	other := r.Proposed
	if side == r.Proposed {
		other = r.InForce
	}
	o, ok := other.Episode(e.ID)
	switch {
	case !ok && side == r.Proposed:
		return Appears
	case !ok:
		return Vanishes
	case o.Digest == e.Digest:
		return Same
	}
	return Changed
}

// CSV files written by WriteCSV.
var CSVFiles = []string{"resumo.csv", "episodios.csv", "evidencias.csv", "cobertura.csv", "lacunas.csv"}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func ts(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02 15:04:05.000")
}

// WriteCSV writes the report as CSV files in dir (CSVFiles): times in the profile's time zone,
// numbers with a decimal point, UTF-8.
func (r *Result) WriteCSV(dir string) error {
	loc := r.InForce.loc
	if loc == nil {
		loc = time.UTC
	}
	write := func(name string, rows [][]string) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := csv.NewWriter(f)
		if err := w.WriteAll(rows); err != nil {
			f.Close()
			return fmt.Errorf("whatif: %s: %w", name, err)
		}
		return f.Close()
	}
	tally := func(row Row) []string {
		return []string{strconv.Itoa(row.InForce.Episodes), strconv.Itoa(row.Proposed.Episodes), strconv.Itoa(row.Proposed.Episodes - row.InForce.Episodes),
			strconv.Itoa(row.InForce.Autos), strconv.Itoa(row.Proposed.Autos), strconv.Itoa(row.Proposed.Autos - row.InForce.Autos),
			num(row.InForce.UFMP), num(row.Proposed.UFMP), num(row.Proposed.UFMP - row.InForce.UFMP)}
	}
	sum := [][]string{{"dimensao", "chave", "nome", "episodios_vigente", "episodios_proposto", "diferenca_episodios",
		"autos_vigente", "autos_proposto", "diferenca_autos", "multas_ufmp_vigente", "multas_ufmp_proposto", "diferenca_ufmp"}}
	sum = append(sum, append([]string{"total", "", "Total"}, tally(r.Total())...))
	for _, t := range r.Tables() {
		for _, row := range t.Rows {
			sum = append(sum, append([]string{t.Dimension, row.Key, row.Label}, tally(row)...))
		}
	}
	if err := write("resumo.csv", sum); err != nil {
		return err
	}
	eps := [][]string{{"situacao", "perfil", "id", "veiculo", "permissionario", "regra", "artigo", "inicio", "fim", "duracao_s",
		"pico", "unidade", "limite", "lat", "lon", "local", "auto", "multa_ufmp", "evidencias", "digest"}}
	for _, j := range []*Judgement{r.InForce, r.Proposed} {
		for k := range j.Episodes {
			e := &j.Episodes[k]
			var end time.Time
			if e.End != nil {
				end = e.End.Time
			}
			_, site := siteOf(e)
			if e.Site == nil {
				site = ""
			}
			auto, fine := "", ""
			if d, ok := j.DraftOf(e.ID); ok {
				auto, fine = d.ID, num(d.FineUFMP)
			}
			eps = append(eps, []string{r.Situation(e, j), j.Label, e.ID, e.Vehicle, e.Licensee, e.Rule, e.Article, ts(e.Start.Time, loc), ts(end, loc),
				num(e.DurationS), num(e.Peak), e.Unit, num(e.Limit), num(e.Lat), num(e.Lon), site, auto, fine, strconv.Itoa(e.Evidence), e.Digest})
		}
	}
	if err := write("episodios.csv", eps); err != nil {
		return err
	}
	ev := [][]string{{"situacao", "episodio", "tipo", "epoch", "seq", "t", "valor", "unidade", "lat", "lon"}}
	for _, ds := range [][]Diff{r.Appear, r.Vanish} {
		for _, d := range ds {
			sit := Appears
			if d.Side == r.InForce.Label {
				sit = Vanishes
			}
			for _, x := range d.Readings {
				lat, lon := "", ""
				if x.Lat != nil {
					lat = num(*x.Lat)
				}
				if x.Lon != nil {
					lon = num(*x.Lon)
				}
				ev = append(ev, []string{sit, d.ID, x.Kind, x.Epoch, strconv.FormatUint(x.Seq, 10), ts(x.T.Time, loc), num(x.Value), x.Unit, lat, lon})
			}
		}
	}
	if err := write("evidencias.csv", ev); err != nil {
		return err
	}
	cov := [][]string{{"veiculo", "fora_do_cadastro", "lotes", "leituras", "horas_com_telemetria", "leituras_faltando", "leituras_sem_lote", "primeira_leitura", "ultima_leitura"}}
	for _, v := range r.Coverage.Vehicles {
		cov = append(cov, []string{v.Vehicle, strconv.FormatBool(v.Unknown), strconv.Itoa(v.Batches), strconv.Itoa(v.Readings), strconv.Itoa(v.HoursWithData),
			strconv.Itoa(v.Missing), strconv.Itoa(v.Orphans), ts(v.First, loc), ts(v.Last, loc)})
	}
	if err := write("cobertura.csv", cov); err != nil {
		return err
	}
	gaps := [][]string{{"veiculo", "de", "ate", "duracao_min"}}
	for _, g := range r.Coverage.Gaps {
		gaps = append(gaps, []string{g.Vehicle, ts(g.From, loc), ts(g.To, loc), strconv.FormatFloat(g.Duration().Minutes(), 'f', 1, 64)})
	}
	return write("lacunas.csv", gaps)
}
