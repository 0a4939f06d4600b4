package notice

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// niceStep returns a round step (1, 2, 2.5 or 5 × 10^k) near raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}

var timeSteps = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour}

type point struct {
	t time.Time
	v float64
}

// series is one line of a chart.
type series struct {
	label string
	c     rgb
	lw    float64
	pts   []point
	main  bool // the quantity the limit applies to
}

// rawReadings are the readings of the evidence batches of one kind, in time order, one per
// instant (a batch delivered twice counts once); readings timed by the system clock and GPS
// fixes that are not real fixes are never evidence.
type rawReadings struct {
	tacho, gps []point
	sound      []soundPoint
}

type soundPoint struct {
	t        time.Time
	db, durS float64
}

func (d *doc) raw() rawReadings {
	var r rawReadings
	seen := map[string]map[time.Time]bool{"tacho": {}, "gps": {}, "sound": {}}
	first := func(kind string, t wire.Time) bool {
		if seen[kind][t.Time] {
			return false
		}
		seen[kind][t.Time] = true
		return true
	}
	for _, b := range d.batches {
		if b.Clock == wire.ClockSystem {
			continue
		}
		for _, x := range b.Tacho {
			if x.SpeedKmh != nil && first("tacho", x.T) {
				r.tacho = append(r.tacho, point{x.T.Time, *x.SpeedKmh})
			}
		}
		for _, x := range b.GPS {
			if x.SpeedKmh != nil && x.Fix != wire.FixNone && x.Fix != wire.FixEstimated && first("gps", x.T) {
				r.gps = append(r.gps, point{x.T.Time, *x.SpeedKmh})
			}
		}
		for _, x := range b.Sound {
			if x.LAeqDB != nil && first("sound", x.T) {
				dur := 1.0
				if x.DurS != nil {
					dur = *x.DurS
				}
				r.sound = append(r.sound, soundPoint{x.T.Time, *x.LAeqDB, dur})
			}
		}
	}
	byTime := func(a, b point) int { return a.t.Compare(b.t) }
	slices.SortFunc(r.tacho, byTime)
	slices.SortFunc(r.gps, byTime)
	slices.SortFunc(r.sound, func(a, b soundPoint) int { return a.t.Compare(b.t) })
	return r
}

// leq is the energy average of the readings in the window of windowS seconds ending at each
// reading, L = 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ), where the readings cover at least 90% of
// the window (as the rules compute it), plus offset dB.
func leq(sound []soundPoint, windowS, offset float64) []point {
	var out []point
	w := time.Duration(windowS * float64(time.Second))
	lo := 0
	for hi := range sound {
		t := sound[hi].t
		for lo < hi && !sound[lo].t.After(t.Add(-w)) {
			lo++
		}
		var energy, covered float64
		for _, s := range sound[lo : hi+1] {
			energy += s.durS * math.Pow(10, s.db/10)
			covered += s.durS
		}
		if covered >= 0.9*windowS && covered > 0 {
			out = append(out, point{t, 10*math.Log10(energy/covered) + offset})
		}
	}
	return out
}

func within(pts []point, from, to time.Time) []point {
	var out []point
	for _, p := range pts {
		if !p.t.Before(from) && !p.t.After(to) {
			out = append(out, p)
		}
	}
	return out
}

// r1 is the distance from the meter to the loudspeakers: the registry's, else the profile's.
func (d *doc) r1() float64 {
	if v := d.in.Vehicle; v != nil && v.MeterDistanceM > 0 && !d.d.Unregistered {
		return v.MeterDistanceM
	}
	return d.p.Noise.R1M
}

// chartSeries are the lines of a fact's chart, from the evidence batches around it (the
// episode's own readings when the bundle has no batches), and the time span to show.
func (d *doc) chartSeries(f drafts.Fact, ep *rules.Episode) (ss []series, from, to time.Time) {
	start, end := f.Start.Time, f.End.Time
	if end.IsZero() || end.Before(start) {
		end = start
		for _, r := range ep.Readings {
			if r.T.After(end) {
				end = r.T.Time
			}
		}
	}
	pad := min(max(end.Sub(start)/4, 10*time.Second), time.Minute)
	from, to = start.Add(-pad), end.Add(pad)
	raw := d.raw()
	info, _ := rules.Info(f.Rule)
	switch info.Chart { // the one table of what each rule's chart is (rules.Table)
	case rules.ChartSpeed:
		tacho := series{label: "velocidade pelo tacógrafo", c: colTacho, lw: 0.55, pts: within(raw.tacho, from, to)}
		gps := series{label: "velocidade pelo GPS", c: colGPS, lw: 0.55, pts: within(raw.gps, from, to)}
		if f.Source == "gps" {
			gps.main = true
			tacho.label, tacho.lw = "tacógrafo (conferência)", 0.3
			ss = append(ss, tacho, gps)
		} else {
			tacho.main = true
			gps.label, gps.lw = "GPS (conferência)", 0.3
			ss = append(ss, gps, tacho)
		}
	case rules.ChartSound:
		meter := make([]point, 0, len(raw.sound))
		for _, s := range raw.sound {
			meter = append(meter, point{s.t, s.db})
		}
		ss = append(ss, series{label: "L_Aeq 1 s no medidor", c: rgb{190, 170, 225}, lw: 0.3, pts: within(meter, from, to)})
		if f.Rule == "noise_limit" {
			w := d.p.Noise.WindowS
			off := -20 * math.Log10(d.p.Noise.R2M/d.r1())
			ss = append(ss, series{label: "L_Aeq " + num(w, 0) + " s estimado no receptor (ESTIMATIVA)", c: colSound, lw: 0.6, main: true,
				pts: within(leq(raw.sound, w, off), from, to)})
		} else {
			w := d.p.Sensitive.EmissionWindow
			ss = append(ss, series{label: "L_Aeq " + num(w, 0) + " s no medidor", c: colSound, lw: 0.6, main: true,
				pts: within(leq(raw.sound, w, 0), from, to)})
		}
	}
	for _, s := range ss {
		if s.main && len(s.pts) >= 2 {
			return ss, from, to
		}
	}
	// No batches: the episode's readings, by kind.
	ss = nil
	names := map[string]string{"tacho": "tacógrafo", "gps": "GPS", "sound": "medidor", "door": "porta de passageiros"}
	colours := map[string]rgb{"tacho": colTacho, "gps": colGPS, "sound": colSound}
	for _, r := range ep.Readings {
		if r.Unit != f.Unit && r.Unit != "" {
			continue
		}
		i := slices.IndexFunc(ss, func(s series) bool { return s.label == r.Kind })
		if i < 0 {
			ss = append(ss, series{label: r.Kind, c: colSound, lw: 0.55, main: len(ss) == 0})
			i = len(ss) - 1
		}
		ss[i].pts = append(ss[i].pts, point{r.T.Time, r.Value})
	}
	for i := range ss {
		k := ss[i].label
		if c, ok := colours[k]; ok {
			ss[i].c = c
		}
		if n, ok := names[k]; ok {
			ss[i].label = n
		}
		slices.SortFunc(ss[i].pts, func(a, b point) int { return a.t.Compare(b.t) })
		if f.Estimate && f.Unit == "dB(A)" {
			ss[i].label += " (leituras no medidor)"
		}
	}
	if len(ss) > 0 {
		from, to = ss[0].pts[0].t, ss[0].pts[len(ss[0].pts)-1].t
		for _, s := range ss {
			from, to = minTime(from, s.pts[0].t), maxTime(to, s.pts[len(s.pts)-1].t)
		}
	}
	return ss, from, to
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

// drawChart draws a fact's readings over time against its limit (solid) and limit plus
// tolerance (dashed), with the episode's span shaded, in the box (x, y, w, h): the title, the
// legend, then the plot (bands, grid and axes, limit lines, readings, labels, peak).
func (d *doc) drawChart(x, y, w, h float64, n int, f drafts.Fact, ep *rules.Episode) {
	ss, from, to := d.chartSeries(f, ep)
	d.chartTitle(x, y, n, f)
	limits := drawsLimit(f)
	legendBottom := d.chartLegend(x+chartLeft, y+7, x+w, ss, f, limits)

	// Plot area.
	pl := &plot{f: f, limits: limits, x: x + chartLeft, y: legendBottom + 3.5}
	pl.w, pl.h = w-chartLeft-1, y+h-10-pl.y
	d.fill(colWhite)
	d.draw(colRule)
	d.pdf.SetLineWidth(0.2)
	d.pdf.Rect(pl.x, pl.y, pl.w, pl.h, "FD")
	count := 0
	for _, s := range ss {
		count += len(s.pts)
	}
	if count < 2 {
		d.font("I", 8)
		d.text(colMuted)
		d.pdf.SetXY(pl.x, pl.y+pl.h/2-2)
		d.pdf.CellFormat(pl.w, 4, d.tr("Leituras insuficientes para o gráfico."), "", 0, "C", false, 0, "")
		d.text(colInk)
		return
	}
	pl.scale(ss, from, to)
	d.plotBands(pl)
	d.plotGrid(pl)
	d.plotTimeAxis(pl)
	d.pdf.ClipRect(pl.x, pl.y, pl.w, pl.h, false)
	d.plotLimits(pl)
	d.plotSeries(pl, ss)
	d.pdf.ClipEnd()
	d.plotLimitLabels(pl)
	d.plotPeak(pl, ss, ep)
	d.text(colInk)
}

// chartLeft is the room left of a chart's plot area for the value labels and the unit, mm.
const chartLeft = 16.0

// plot is the plot area of a chart and its scales.
type plot struct {
	f          drafts.Fact
	limits     bool    // the fact has a limit or a tolerance to draw
	x, y, w, h float64 // the area on the page, mm
	from, to   time.Time
	lo, hi     float64 // the value range
	step       float64 // the value grid step
}

// X and Y place a time and a value on the page.
func (p *plot) X(t time.Time) float64 {
	return p.x + p.w*t.Sub(p.from).Seconds()/p.to.Sub(p.from).Seconds()
}
func (p *plot) Y(v float64) float64 { return p.y + p.h - p.h*(v-p.lo)/(p.hi-p.lo) }

// scale sets the time range (from, to) and a value range that holds the readings, the limits
// and the peak, rounded to a grid step.
func (p *plot) scale(ss []series, from, to time.Time) {
	f := p.f
	if !to.After(from) {
		from, to = from.Add(-time.Second), to.Add(time.Second)
	}
	p.from, p.to = from, to
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, pt := range s.pts {
			lo, hi = math.Min(lo, pt.v), math.Max(hi, pt.v)
		}
	}
	if p.limits {
		lo, hi = math.Min(lo, f.Limit), math.Max(hi, f.Limit+f.Tolerance)
	}
	lo, hi = math.Min(lo, f.Peak), math.Max(hi, f.Peak)
	switch f.Unit {
	case "km/h", "min", "m":
		lo = 0
	default:
		lo -= 0.1 * math.Max(hi-lo, 1)
	}
	hi += 0.12 * math.Max(hi-lo, 1)
	p.step = niceStep((hi - lo) / 5)
	p.lo, p.hi = math.Floor(lo/p.step)*p.step, math.Ceil(hi/p.step)*p.step
}

// chartTitle writes the chart's title: what is plotted, and whether it is an estimate.
func (d *doc) chartTitle(x, y float64, n int, f drafts.Fact) {
	what := "valor"
	switch f.Unit {
	case "km/h":
		what = "velocidade"
	case "dB(A)":
		what = "nível sonoro"
	case "min":
		what = "tempo"
	case "m":
		what = "distância"
	}
	title := fmt.Sprintf("Gráfico do fato %d — %s em %s ao longo do tempo", n, what, f.Unit)
	if f.Estimate {
		title += "; o nível no receptor é ESTIMATIVA"
	}
	d.font("B", 7.8)
	d.text(colInk)
	d.pdf.Text(x, y+3, d.tr(title))
}

// drawsLimit reports whether a fact's chart draws its limit lines: when it has a limit or a
// tolerance that is a limit of the law (a rule's threshold that is none, rules.RuleInfo.NoLimit,
// such as telemetry_fault's speed from which a tachograph must report, is not drawn as one).
func drawsLimit(f drafts.Fact) bool {
	if info, _ := rules.Info(f.Rule); info.NoLimit {
		return false
	}
	return f.Limit > 0 || f.Tolerance > 0
}

// limitName is what a fact's limit is called: an emission threshold for the sound near sites
// and boarding points, a limit otherwise.
func limitName(f drafts.Fact) string {
	if f.Rule == "sensitive_zone_sound" || f.Rule == "boarding_sound" {
		return "limiar de emissão"
	}
	return "limite"
}

// chartLegend draws the legend from (x0, y0), left to right, wrapping at right, and returns
// the baseline of its last row.
func (d *doc) chartLegend(x0, y0, right float64, ss []series, f drafts.Fact, limits bool) float64 {
	pdf := d.pdf
	type entry struct {
		label string
		c     rgb
		lw    float64
		dash  bool
		band  bool
	}
	var entries []entry
	for _, s := range ss {
		if len(s.pts) > 0 {
			entries = append(entries, entry{label: s.label, c: s.c, lw: s.lw})
		}
	}
	if limits {
		name := limitName(f)
		entries = append(entries, entry{label: name, c: colRed, lw: 0.4})
		if f.Tolerance > 0 {
			entries = append(entries, entry{label: name + " + tolerância", c: colRed, lw: 0.4, dash: true})
		}
	}
	entries = append(entries, entry{label: "duração do episódio", band: true})
	d.font("", 6.5)
	type placed struct {
		e    entry
		x, y float64
	}
	var legend []placed
	lx, ly := x0, y0
	for _, e := range entries {
		ew := 7 + pdf.GetStringWidth(d.tr(e.label)) + 5
		if lx+ew > right && lx > x0 {
			lx, ly = x0, ly+3.6
		}
		legend = append(legend, placed{e, lx, ly})
		lx += ew
	}
	for _, p := range legend {
		switch {
		case p.e.band:
			d.fill(rgb{214, 222, 235})
			pdf.Rect(p.x, p.y-1.3, 5.5, 2.6, "F")
		default:
			d.draw(p.e.c)
			pdf.SetLineWidth(p.e.lw)
			if p.e.dash {
				pdf.SetDashPattern([]float64{1.2, 0.8}, 0)
			}
			pdf.Line(p.x, p.y, p.x+5.5, p.y)
			pdf.SetDashPattern(nil, 0)
		}
		d.text(colInk)
		pdf.Text(p.x+7, p.y+0.9, d.tr(p.e.label))
	}
	return ly
}

// plotBands shades the area above the limit plus tolerance and the episode's span.
func (d *doc) plotBands(p *plot) {
	pdf, f := d.pdf, p.f
	pdf.ClipRect(p.x, p.y, p.w, p.h, false)
	if p.limits {
		d.fill(colRedFill)
		pdf.Rect(p.x, p.y, p.w, p.Y(f.Limit+f.Tolerance)-p.y, "F")
	}
	if !f.End.IsZero() {
		pdf.SetAlpha(0.45, "Multiply")
		d.fill(rgb{200, 212, 230})
		pdf.Rect(p.X(f.Start.Time), p.y, p.X(f.End.Time)-p.X(f.Start.Time), p.h, "F")
		pdf.SetAlpha(1, "Normal")
	}
	pdf.ClipEnd()
}

// plotGrid draws the horizontal grid lines with their values.
func (d *doc) plotGrid(p *plot) {
	pdf := d.pdf
	digits := 0
	if p.step < 1 {
		digits = 1
	}
	d.font("", 6.3)
	d.text(colMuted)
	for v := p.lo; v <= p.hi+p.step/1000; v += p.step {
		yy := p.Y(v)
		d.draw(rgb{228, 231, 236})
		pdf.SetLineWidth(0.12)
		pdf.Line(p.x, yy, p.x+p.w, yy)
		label := num(v, digits)
		pdf.Text(p.x-1.2-pdf.GetStringWidth(label), yy+0.9, label)
	}
}

// plotTimeAxis draws the vertical grid lines at round local times, their labels, the time
// axis's title and the unit.
func (d *doc) plotTimeAxis(p *plot) {
	pdf := d.pdf
	tstep := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if p.to.Sub(p.from)/s <= 8 {
			tstep = s
			break
		}
	}
	lfrom := d.local(p.from)
	first := lfrom.Truncate(tstep)
	if first.Before(lfrom) {
		first = first.Add(tstep)
	}
	for t := first; !t.After(d.local(p.to)); t = t.Add(tstep) {
		xx := p.X(t)
		d.draw(rgb{228, 231, 236})
		pdf.SetLineWidth(0.12)
		pdf.Line(xx, p.y, xx, p.y+p.h)
		d.draw(colRule)
		pdf.Line(xx, p.y+p.h, xx, p.y+p.h+1)
		label := clock(t)
		if tstep >= time.Minute {
			label = t.Format("15:04")
		}
		pdf.Text(xx-pdf.GetStringWidth(label)/2, p.y+p.h+3.6, label)
	}
	d.font("", 6.6)
	axis := "Hora local (" + date(lfrom) + ", " + utcOffset(lfrom) + ")"
	pdf.Text(p.x+p.w/2-pdf.GetStringWidth(d.tr(axis))/2, p.y+p.h+7.4, d.tr(axis))
	d.font("B", 6.6)
	d.text(colInk)
	pdf.Text(p.x-chartLeft, p.y+p.h/2+1, d.tr(p.f.Unit))
}

// plotLimits draws the limit (solid) and the limit plus tolerance (dashed).
func (d *doc) plotLimits(p *plot) {
	if !p.limits {
		return
	}
	pdf, f := d.pdf, p.f
	d.draw(colRed)
	pdf.SetLineWidth(0.4)
	pdf.Line(p.x, p.Y(f.Limit), p.x+p.w, p.Y(f.Limit))
	if f.Tolerance > 0 {
		pdf.SetDashPattern([]float64{1.6, 1.1}, 0)
		pdf.Line(p.x, p.Y(f.Limit+f.Tolerance), p.x+p.w, p.Y(f.Limit+f.Tolerance))
		pdf.SetDashPattern(nil, 0)
	}
}

// plotSeries draws the readings, the main series last; a line breaks where readings are
// missing (a gap of more than five times the median interval, at least 5 s).
func (d *doc) plotSeries(p *plot, ss []series) {
	pdf := d.pdf
	slices.SortStableFunc(ss, func(a, b series) int {
		if a.main == b.main {
			return 0
		}
		if a.main {
			return 1
		}
		return -1
	})
	pdf.SetLineCapStyle("round")
	pdf.SetLineJoinStyle("round")
	for _, s := range ss {
		gap := 5 * time.Second
		if len(s.pts) > 2 {
			var dts []time.Duration
			for i := 1; i < len(s.pts); i++ {
				if dt := s.pts[i].t.Sub(s.pts[i-1].t); dt > 0 {
					dts = append(dts, dt)
				}
			}
			if len(dts) > 0 {
				slices.Sort(dts)
				gap = max(gap, 5*dts[len(dts)/2])
			}
		}
		d.draw(s.c)
		pdf.SetLineWidth(s.lw)
		for i := 1; i < len(s.pts); i++ {
			a, b := s.pts[i-1], s.pts[i]
			if b.t.Sub(a.t) <= gap {
				pdf.Line(p.X(a.t), p.Y(a.v), p.X(b.t), p.Y(b.v))
			}
		}
	}
	pdf.SetLineCapStyle("butt")
	pdf.SetLineJoinStyle("miter")
}

// plotLimitLabels labels the limit lines, right-aligned inside the plot: the limit below its
// line, limit plus tolerance above its line.
func (d *doc) plotLimitLabels(p *plot) {
	if !p.limits {
		return
	}
	f := p.f
	d.font("", 6.3)
	d.text(colRed)
	d.label(p.x+p.w-1.5, p.Y(f.Limit)+2.6, limitName(f)+" "+num(f.Limit, 1)+" "+f.Unit)
	if f.Tolerance > 0 {
		d.label(p.x+p.w-1.5, p.Y(f.Limit+f.Tolerance)-1, "limite + tolerância "+num(f.Limit+f.Tolerance, 1)+" "+f.Unit)
	}
}

// plotPeak marks the episode's peak, as recorded, with its value.
func (d *doc) plotPeak(p *plot, ss []series, ep *rules.Episode) {
	pdf, f := d.pdf, p.f
	at := ep.PeakAt.Time
	if at.IsZero() {
		for _, s := range ss {
			if s.main {
				for _, pt := range s.pts {
					if pt.v == f.Peak {
						at = pt.t
					}
				}
			}
		}
	}
	if at.IsZero() || at.Before(p.from) || at.After(p.to) {
		return
	}
	pkx, pky := p.X(at), p.Y(f.Peak)
	d.draw(colInk)
	d.fill(colWhite)
	pdf.SetLineWidth(0.35)
	pdf.Circle(pkx, pky, 0.9, "FD")
	d.font("B", 6.3)
	d.text(colInk)
	label := "máx. " + num(f.Peak, 2) + " " + f.Unit
	if f.Estimate {
		label += " (estimado)"
	}
	lx := pkx + 1.6
	if lx+pdf.GetStringWidth(d.tr(label)) > p.x+p.w-1 {
		lx = pkx - 1.6 - pdf.GetStringWidth(d.tr(label))
	}
	pdf.Text(lx, math.Max(pky-1.4, p.y+2.6), d.tr(label))
}

// label writes text right-aligned at (right, baseline) on a light background, so that it stays
// legible over the lines of a chart.
func (d *doc) label(right, baseline float64, text string) {
	t := d.tr(text)
	w := d.pdf.GetStringWidth(t)
	_, fh := d.pdf.GetFontSize()
	d.pdf.SetAlpha(0.8, "Normal")
	d.fill(colWhite)
	d.pdf.Rect(right-w-0.6, baseline-fh*0.8, w+1.2, fh*1.05, "F")
	d.pdf.SetAlpha(1, "Normal")
	d.pdf.Text(right-w, baseline, t)
}
