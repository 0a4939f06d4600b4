package notice

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/go-pdf/fpdf"
	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// earthRadiusM is the mean Earth radius (IUGG), for the local equirectangular projection.
const earthRadiusM = 6371008.8

// projection is a local equirectangular projection around an origin, in metres east and
// north, fitted into a box on the page.
type projection struct {
	lat0, lon0 float64
	kx, ky     float64 // metres per degree of longitude and latitude
	// paper transform
	cx, cy float64 // box centre, mm
	mx, my float64 // metres at the box centre
	mmPerM float64
}

func newProjection(lat0, lon0 float64) *projection {
	k := math.Pi / 180 * earthRadiusM
	return &projection{lat0: lat0, lon0: lon0, kx: k * math.Cos(lat0*math.Pi/180), ky: k}
}

func (p *projection) metres(lat, lon float64) (x, y float64) {
	return (lon - p.lon0) * p.kx, (lat - p.lat0) * p.ky
}

func (p *projection) paper(lat, lon float64) (x, y float64) {
	mx, my := p.metres(lat, lon)
	return p.cx + (mx-p.mx)*p.mmPerM, p.cy - (my-p.my)*p.mmPerM
}

// latLon returns the position at paper point (x, y): the inverse of paper.
func (p *projection) latLon(x, y float64) (lat, lon float64) {
	mx := (x-p.cx)/p.mmPerM + p.mx
	my := (p.cy-y)/p.mmPerM + p.my
	return p.lat0 + my/p.ky, p.lon0 + mx/p.kx
}

// bounds accumulates an extent in metres.
type bounds struct {
	minX, minY, maxX, maxY float64
	ok                     bool
}

func (b *bounds) add(x, y, r float64) {
	if !b.ok {
		b.minX, b.minY, b.maxX, b.maxY, b.ok = x-r, y-r, x+r, y+r, true
		return
	}
	b.minX, b.minY = math.Min(b.minX, x-r), math.Min(b.minY, y-r)
	b.maxX, b.maxY = math.Max(b.maxX, x+r), math.Max(b.maxY, y+r)
}

type latLon struct{ lat, lon float64 }

// tracks returns the positions of each episode's evidence in time order, and the positions of
// the raw batches around them (valid fixes only: never dead reckoning, never system time).
func (d *doc) tracks() (episodes [][]latLon, context []latLon) {
	for _, ep := range d.b.Episodes {
		rs := slices.Clone(ep.Readings)
		slices.SortStableFunc(rs, func(a, b rules.Evidence) int { return a.T.Compare(b.T.Time) })
		var tr []latLon
		for _, r := range rs {
			if r.Lat == nil || r.Lon == nil || (*r.Lat == 0 && *r.Lon == 0) {
				continue
			}
			p := latLon{*r.Lat, *r.Lon}
			if len(tr) > 0 && tr[len(tr)-1] == p {
				continue
			}
			tr = append(tr, p)
		}
		if len(tr) > 0 {
			episodes = append(episodes, tr)
		}
	}
	type timed struct {
		t wire.Time
		p latLon
	}
	var all []timed
	for _, b := range d.batches {
		if b.Clock == wire.ClockSystem {
			continue
		}
		for _, g := range b.GPS {
			if g.Fix == wire.FixNone || g.Fix == wire.FixEstimated || (g.Lat == 0 && g.Lon == 0) {
				continue
			}
			all = append(all, timed{g.T, latLon{g.Lat, g.Lon}})
		}
	}
	slices.SortStableFunc(all, func(a, b timed) int { return a.t.Compare(b.t.Time) })
	for _, t := range all {
		if len(context) > 0 && context[len(context)-1] == t.p {
			continue
		}
		context = append(context, t.p)
	}
	return episodes, context
}

// drawMap draws the vector mini-map of the track, the sites and their radius, with a scale bar
// and a north arrow, in the box (x, y, w, h), and its legend below it.
func (d *doc) drawMap(x, y, w, h float64) {
	pdf := d.pdf
	d.fill(rgb{249, 250, 251})
	d.draw(colRule)
	pdf.SetLineWidth(0.25)
	pdf.Rect(x, y, w, h, "FD")

	episodes, context := d.tracks()
	radius := d.p.Sensitive.RadiusM

	// The extent: the episodes' track, the peaks, the places (sensitive sites with their radius).
	var pts []latLon
	for _, tr := range episodes {
		pts = append(pts, tr...)
	}
	for _, f := range d.d.Facts {
		if f.Lat != 0 || f.Lon != 0 {
			pts = append(pts, latLon{f.Lat, f.Lon})
		}
	}
	if len(pts) == 0 {
		pts = append(pts, context...)
	}
	if len(pts) == 0 {
		d.font("I", 8)
		d.text(colMuted)
		pdf.SetXY(x+4, y+h/2-5)
		pdf.MultiCell(w-8, 4, d.tr("Croqui indisponível: sem posições GPS válidas nas evidências."), "", "C", false)
		d.text(colInk)
		return
	}
	minLat, maxLat, minLon, maxLon := pts[0].lat, pts[0].lat, pts[0].lon, pts[0].lon
	for _, p := range pts {
		minLat, maxLat = math.Min(minLat, p.lat), math.Max(maxLat, p.lat)
		minLon, maxLon = math.Min(minLon, p.lon), math.Max(maxLon, p.lon)
	}
	pr := newProjection((minLat+maxLat)/2, (minLon+maxLon)/2)
	var bb bounds
	for _, p := range pts {
		mx, my := pr.metres(p.lat, p.lon)
		bb.add(mx, my, 0)
	}
	for _, f := range d.places {
		r := 0.0
		kind, _ := f.Properties["kind"].(string)
		if kind == "street" || kind == "landmark" {
			continue // they name the place; the map is framed on the evidence
		}
		if kind == "sensitive" {
			r = radius
		}
		eachPoint(f.Geometry, func(p orb.Point) {
			mx, my := pr.metres(p.Lat(), p.Lon())
			bb.add(mx, my, r)
		})
	}
	const minExtent = 120.0
	if ex := bb.maxX - bb.minX; ex < minExtent {
		bb.minX, bb.maxX = bb.minX-(minExtent-ex)/2, bb.maxX+(minExtent-ex)/2
	}
	if ey := bb.maxY - bb.minY; ey < minExtent {
		bb.minY, bb.maxY = bb.minY-(minExtent-ey)/2, bb.maxY+(minExtent-ey)/2
	}
	const pad = 4.0
	pr.mmPerM = math.Min((w-2*pad)/(bb.maxX-bb.minX), (h-2*pad)/(bb.maxY-bb.minY))
	pr.cx, pr.cy = x+w/2, y+h/2
	pr.mx, pr.my = (bb.minX+bb.maxX)/2, (bb.minY+bb.maxY)/2

	pdf.ClipRect(x, y, w, h, false)
	based := d.baseMap(pr, x, y, w, h)
	d.drawStreets(pr)
	// Places: the radius of sensitive sites first, then the sites and zones themselves.
	for _, f := range d.places {
		if kind, _ := f.Properties["kind"].(string); kind == "sensitive" {
			d.drawBuffer(pr, f.Geometry, radius)
		}
	}
	for _, f := range d.places {
		kind, _ := f.Properties["kind"].(string)
		if kind != "street" {
			d.drawPlace(pr, f.Geometry, kind)
		}
	}
	// The track: the raw batches around the facts, then the facts.
	pdf.SetLineCapStyle("round")
	pdf.SetLineJoinStyle("round")
	d.draw(colContext)
	pdf.SetLineWidth(0.35)
	d.polyline(pr, context)
	d.draw(colTrack)
	pdf.SetLineWidth(0.8)
	for _, tr := range episodes {
		d.polyline(pr, tr)
		sx, sy := pr.paper(tr[0].lat, tr[0].lon)
		d.fill(colWhite)
		pdf.SetLineWidth(0.35)
		pdf.Circle(sx, sy, 0.9, "FD")
		pdf.SetLineWidth(0.8)
	}
	for _, f := range d.d.Facts {
		if f.Lat == 0 && f.Lon == 0 {
			continue
		}
		px, py := pr.paper(f.Lat, f.Lon)
		d.draw(colInk)
		pdf.SetLineWidth(0.45)
		pdf.Line(px-1.4, py-1.4, px+1.4, py+1.4)
		pdf.Line(px-1.4, py+1.4, px+1.4, py-1.4)
	}
	// Labels of the places; a street's along it, near the facts.
	for _, f := range d.places {
		name, _ := f.Properties["name"].(string)
		if name == "" {
			continue
		}
		if kind, _ := f.Properties["kind"].(string); kind == "street" {
			d.streetLabel(pr, f.Geometry, name)
			continue
		}
		c := f.Geometry.Bound().Center()
		px, py := pr.paper(c.Lat(), c.Lon())
		d.font("B", 6.5)
		d.text(colSite)
		pdf.Text(px+2, py-1.5, d.tr(name))
	}
	pdf.SetLineCapStyle("butt")
	pdf.SetLineJoinStyle("miter")
	pdf.ClipEnd()

	d.northArrow(x+w-6, y+7)
	d.scaleBar(x+3.5, y+h-4.5, w, pr.mmPerM)

	// Legend below the map.
	type entry struct {
		label string
		draw  func(x, y float64)
	}
	var entries []entry
	line := func(c rgb, lw float64, dash bool) func(x, y float64) {
		return func(lx, ly float64) {
			d.draw(c)
			pdf.SetLineWidth(lw)
			if dash {
				pdf.SetDashPattern([]float64{1, 0.7}, 0)
			}
			pdf.Line(lx, ly, lx+6, ly)
			pdf.SetDashPattern(nil, 0)
		}
	}
	entries = append(entries, entry{"trajeto durante o(s) fato(s)", line(colTrack, 0.8, false)})
	if len(context) > 1 {
		entries = append(entries, entry{"trajeto 2 min antes e depois", line(colContext, 0.35, false)})
	}
	entries = append(entries, entry{"ponto de valor máximo", func(lx, ly float64) {
		d.draw(colInk)
		pdf.SetLineWidth(0.45)
		pdf.Line(lx+2, ly-1.2, lx+4.4, ly+1.2)
		pdf.Line(lx+2, ly+1.2, lx+4.4, ly-1.2)
	}})
	for _, f := range d.places {
		if kind, _ := f.Properties["kind"].(string); kind == "sensitive" {
			entries = append(entries, entry{"raio de " + num(radius, 0) + " m do local protegido", func(lx, ly float64) {
				d.fill(colZone)
				d.draw(colZoneLine)
				pdf.SetLineWidth(0.3)
				pdf.SetDashPattern([]float64{0.8, 0.5}, 0)
				pdf.Rect(lx, ly-1.5, 6, 3, "FD")
				pdf.SetDashPattern(nil, 0)
			}})
			break
		}
	}
	d.font("", 6.6)
	d.text(colInk)
	ly := y + h + 3
	for i, e := range entries {
		ex := x + float64(i%2)*(w/2)
		ey := ly + float64(i/2)*3.6
		e.draw(ex, ey)
		pdf.Text(ex+7.5, ey+0.9, d.tr(e.label))
	}
	d.font("I", 6)
	d.text(colMuted)
	note := "Croqui vetorial em projeção local (norte para cima), sem mapa de fundo."
	if based {
		note = "Mapa de fundo: " + d.in.Tiles.attribution() + ". Projeção local, norte para cima."
	}
	pdf.Text(x, ly+float64((len(entries)+1)/2)*3.6+0.8, d.tr(note))
	d.text(colInk)
}

// drawStreets draws the streets that name the facts' places as light roads under everything
// else.
func (d *doc) drawStreets(pr *projection) {
	for _, f := range d.places {
		if kind, _ := f.Properties["kind"].(string); kind != "street" {
			continue
		}
		for _, ls := range lines(f.Geometry) {
			pts := make([]latLon, 0, len(ls))
			for _, p := range ls {
				pts = append(pts, latLon{p.Lat(), p.Lon()})
			}
			d.pdf.SetLineCapStyle("round")
			d.draw(rgb{205, 210, 218})
			d.pdf.SetLineWidth(2.4)
			d.polyline(pr, pts)
			d.draw(colWhite)
			d.pdf.SetLineWidth(1.6)
			d.polyline(pr, pts)
			d.pdf.SetLineCapStyle("butt")
		}
	}
}

// lines returns the lines of a LineString or MultiLineString.
func lines(g orb.Geometry) []orb.LineString {
	switch g := g.(type) {
	case orb.LineString:
		return []orb.LineString{g}
	case orb.MultiLineString:
		return g
	}
	return nil
}

// streetLabel writes a street's name beside it, at its point nearest to the first fact's
// position (inside the map, which clips).
func (d *doc) streetLabel(pr *projection, g orb.Geometry, name string) {
	var fx, fy float64
	found := false
	for _, f := range d.d.Facts {
		if f.Lat != 0 || f.Lon != 0 {
			fx, fy = pr.paper(f.Lat, f.Lon)
			found = true
			break
		}
	}
	if !found {
		return
	}
	best, bx, by := math.Inf(1), 0.0, 0.0
	for _, ls := range lines(g) {
		for i := 1; i < len(ls); i++ {
			ax, ay := pr.paper(ls[i-1].Lat(), ls[i-1].Lon())
			cx, cy := pr.paper(ls[i].Lat(), ls[i].Lon())
			// The point of segment a–c nearest to the fact.
			dx, dy := cx-ax, cy-ay
			t := 0.0
			if l2 := dx*dx + dy*dy; l2 > 0 {
				t = math.Min(1, math.Max(0, ((fx-ax)*dx+(fy-ay)*dy)/l2))
			}
			px, py := ax+t*dx, ay+t*dy
			if dist := math.Hypot(px-fx, py-fy); dist < best {
				best, bx, by = dist, px, py
			}
		}
	}
	if math.IsInf(best, 1) {
		return
	}
	d.font("I", 6.3)
	d.text(colMuted)
	label := d.tr(name)
	// Beside the street, clear of the peak's mark.
	d.pdf.Text(bx+3, by+3.8, label)
	d.text(colInk)
}

// baseMap draws the base-map tiles (Input.Tiles) under the box (x, y, w, h), lightened so that
// the track and the places stand out, and reports whether it did. Without a tile source, or
// when a tile cannot be fetched within the timeout, it draws nothing: the sketch stands alone.
func (d *doc) baseMap(pr *projection, x, y, w, h float64) bool {
	t := d.in.Tiles
	if t == nil || t.URL == "" {
		return false
	}
	north, west := pr.latLon(x, y)
	south, east := pr.latLon(x+w, y+h)
	widthM := w / pr.mmPerM
	z := zoomFor((north+south)/2, widthM, w)
	x0, y0 := tileXY(north, west, z)
	x1, y1 := tileXY(south, east, z)
	var keys []tileKey
	for ty := y0; ty <= y1; ty++ {
		for tx := x0; tx <= x1; tx++ {
			keys = append(keys, tileKey{z, tx, ty})
		}
	}
	images, err := t.fetch(keys)
	if err != nil {
		if t.Logger != nil {
			t.Logger.Warn("notice: base map left out, the sketch stands alone", "draft", d.d.ID, "err", err)
		}
		return false
	}
	pdf := d.pdf
	for _, k := range keys {
		name := fmt.Sprintf("tile-%d-%d-%d", k.z, k.x, k.y)
		opt := fpdf.ImageOptions{ImageType: "JPG"}
		pdf.RegisterImageOptionsReader(name, opt, bytes.NewReader(images[k]))
		nLat, wLon := tileCorner(k.x, k.y, k.z)
		sLat, eLon := tileCorner(k.x+1, k.y+1, k.z)
		px0, py0 := pr.paper(nLat, wLon)
		px1, py1 := pr.paper(sLat, eLon)
		pdf.ImageOptions(name, px0, py0, px1-px0, py1-py0, false, opt, 0, "")
	}
	// A white veil: the base map is the background, the evidence the figure.
	pdf.SetAlpha(0.35, "Normal")
	d.fill(colWhite)
	pdf.Rect(x, y, w, h, "F")
	pdf.SetAlpha(1, "Normal")
	return true
}

// polyline draws a line through the positions.
func (d *doc) polyline(pr *projection, pts []latLon) {
	for i := 1; i < len(pts); i++ {
		x0, y0 := pr.paper(pts[i-1].lat, pts[i-1].lon)
		x1, y1 := pr.paper(pts[i].lat, pts[i].lon)
		d.pdf.Line(x0, y0, x1, y1)
	}
}

// drawBuffer fills the area within r metres of a geometry: a circle around a point, and
// around a polygon the union of circles at its vertices and bands along its edges.
func (d *doc) drawBuffer(pr *projection, g orb.Geometry, r float64) {
	pdf := d.pdf
	rr := r * pr.mmPerM
	d.fill(colZone)
	switch g := g.(type) {
	case orb.Point:
		px, py := pr.paper(g.Lat(), g.Lon())
		d.draw(colZoneLine)
		pdf.SetLineWidth(0.35)
		pdf.SetDashPattern([]float64{1.2, 0.8}, 0)
		pdf.Circle(px, py, rr, "FD")
		pdf.SetDashPattern(nil, 0)
	default:
		eachRing(g, func(ring orb.Ring) {
			for i, p := range ring {
				px, py := pr.paper(p.Lat(), p.Lon())
				pdf.Circle(px, py, rr, "F")
				if i == 0 {
					continue
				}
				qx, qy := pr.paper(ring[i-1].Lat(), ring[i-1].Lon())
				dx, dy := px-qx, py-qy
				l := math.Hypot(dx, dy)
				if l == 0 {
					continue
				}
				nx, ny := -dy/l*rr, dx/l*rr
				pdf.Polygon([]fpdf.PointType{{X: qx + nx, Y: qy + ny}, {X: px + nx, Y: py + ny}, {X: px - nx, Y: py - ny}, {X: qx - nx, Y: qy - ny}}, "F")
			}
			pts := make([]fpdf.PointType, 0, len(ring))
			for _, p := range ring {
				px, py := pr.paper(p.Lat(), p.Lon())
				pts = append(pts, fpdf.PointType{X: px, Y: py})
			}
			pdf.Polygon(pts, "F")
		})
	}
}

// drawPlace draws a site, zone, itinerary or boarding point.
func (d *doc) drawPlace(pr *projection, g orb.Geometry, kind string) {
	pdf := d.pdf
	switch kind {
	case "sensitive":
		d.fill(rgb{236, 170, 110})
		d.draw(colSite)
	case "itinerary":
		d.draw(colGPS)
	case "garage":
		d.fill(rgb{220, 220, 220})
		d.draw(colMuted)
	default:
		d.fill(rgb{225, 235, 245})
		d.draw(colAccent)
	}
	pdf.SetLineWidth(0.3)
	style := "FD"
	if kind == "nbr_zone" {
		style = "D"
		pdf.SetDashPattern([]float64{1.5, 1}, 0)
	}
	var points func(g orb.Geometry)
	points = func(g orb.Geometry) {
		switch g := g.(type) {
		case orb.Point:
			px, py := pr.paper(g.Lat(), g.Lon())
			pdf.Circle(px, py, 1.2, "FD")
		case orb.MultiPoint:
			for _, p := range g {
				points(p)
			}
		case orb.LineString:
			pts := make([]latLon, 0, len(g))
			for _, p := range g {
				pts = append(pts, latLon{p.Lat(), p.Lon()})
			}
			if kind == "itinerary" {
				pdf.SetDashPattern([]float64{1.5, 1}, 0)
			}
			d.polyline(pr, pts)
			pdf.SetDashPattern(nil, 0)
		case orb.MultiLineString:
			for _, l := range g {
				points(l)
			}
		case orb.Polygon, orb.MultiPolygon:
			eachRing(g, func(ring orb.Ring) {
				pts := make([]fpdf.PointType, 0, len(ring))
				for _, p := range ring {
					px, py := pr.paper(p.Lat(), p.Lon())
					pts = append(pts, fpdf.PointType{X: px, Y: py})
				}
				pdf.Polygon(pts, style)
			})
		}
	}
	points(g)
	pdf.SetDashPattern(nil, 0)
}

// eachPoint calls fn for every vertex of g.
func eachPoint(g orb.Geometry, fn func(orb.Point)) {
	switch g := g.(type) {
	case orb.Point:
		fn(g)
	case orb.MultiPoint:
		for _, p := range g {
			fn(p)
		}
	case orb.LineString:
		for _, p := range g {
			fn(p)
		}
	case orb.MultiLineString:
		for _, l := range g {
			eachPoint(l, fn)
		}
	case orb.Ring:
		for _, p := range g {
			fn(p)
		}
	case orb.Polygon:
		for _, r := range g {
			eachPoint(r, fn)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			eachPoint(p, fn)
		}
	case orb.Collection:
		for _, x := range g {
			eachPoint(x, fn)
		}
	}
}

// eachRing calls fn for every ring of a polygonal geometry.
func eachRing(g orb.Geometry, fn func(orb.Ring)) {
	switch g := g.(type) {
	case orb.Ring:
		fn(g)
	case orb.Polygon:
		for _, r := range g {
			fn(r)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			eachRing(p, fn)
		}
	case orb.Collection:
		for _, x := range g {
			eachRing(x, fn)
		}
	}
}

// northArrow draws an arrow pointing up with an N, centred at (x, y).
func (d *doc) northArrow(x, y float64) {
	pdf := d.pdf
	d.fill(colWhite)
	d.draw(colRule)
	pdf.SetLineWidth(0.2)
	pdf.Circle(x, y, 4.2, "FD")
	d.fill(colInk)
	d.draw(colInk)
	pdf.Polygon([]fpdf.PointType{{X: x, Y: y - 3.2}, {X: x + 1.8, Y: y + 2.4}, {X: x, Y: y + 1.2}, {X: x - 1.8, Y: y + 2.4}}, "F")
	d.font("B", 6.5)
	d.text(colInk)
	w := pdf.GetStringWidth("N")
	pdf.Text(x-w/2, y-4.8, "N")
}

// scaleBar draws a scale bar of a round length about a quarter of the map's width, from (x, y).
func (d *doc) scaleBar(x, y, mapW, mmPerM float64) {
	pdf := d.pdf
	target := 0.3 * mapW / mmPerM
	length := 1.0
	for _, base := range []float64{1, 2, 5} {
		for e := 0; e < 7; e++ {
			v := base * math.Pow(10, float64(e))
			if v <= target && v > length {
				length = v
			}
		}
	}
	bw := length * mmPerM
	d.fill(colWhite)
	pdf.SetAlpha(0.85, "Normal")
	pdf.Rect(x-1.5, y-4.2, bw+3+12, 6.2, "F")
	pdf.SetAlpha(1, "Normal")
	d.draw(colInk)
	pdf.SetLineWidth(0.2)
	d.fill(colInk)
	pdf.Rect(x, y, bw/2, 1.1, "FD")
	d.fill(colWhite)
	pdf.Rect(x+bw/2, y, bw/2, 1.1, "FD")
	label := num(length, 0) + " m"
	if length >= 1000 {
		label = num(length/1000, 1) + " km"
	}
	d.font("", 6.3)
	d.text(colInk)
	pdf.Text(x-0.6, y-0.8, "0")
	pdf.Text(x+bw-0.8, y-0.8, d.tr(label))
}
