package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/profile"
)

// What if (docs/whatif.md, "From the dashboard and the portal"): a replay of a period of the
// archive under the profile in force and a proposal, run in the background by whatif.Jobs in a
// directory of its own — never the live database: no episode, draft, notification or audit
// entry of the live system is read or written by it. The control room (supervisor,
// autoridade, admin) proposes a profile and geofences; a licensee, through the portal routes
// only, proposes their own itinerary and replays their own vehicles, and sees only their own
// runs (another's is answered 404, as one that does not exist).

// WhatifJobs runs the replays (*whatif.Jobs).
type WhatifJobs interface {
	Start(whatif.JobSpec) (*whatif.Job, error)
	Job(id string) (*whatif.Job, bool)
	List() []*whatif.Job
}

// WhatifConfig serves the what-if routes.
type WhatifConfig struct {
	Jobs WhatifJobs
	// InForce is the profile in force with the geofences and the registry the judge applies
	// (the proposal's registry is the same).
	InForce func() whatif.Side
	// MaxDays bounds the period (default 92 days, a season).
	MaxDays int
}

// What-if limits.
const (
	// MaxWhatifUpload bounds each uploaded file (the proposed profile, the geofences).
	MaxWhatifUpload    = 256 << 10
	defaultWhatifDays  = 92
	maxWhatifBodyBytes = 2*MaxWhatifUpload + 16<<10
)

func (s *Server) whatifOn() bool {
	return s.whatif != nil && s.whatif.Jobs != nil && s.whatif.InForce != nil
}

// licenseeVehicleIDs are the vehicles the licensee has now: those a licensee's replay judges.
func (s *Server) licenseeVehicleIDs(licensee string) []string {
	out := []string{}
	if s.reg != nil {
		for _, v := range s.reg.Vehicles() {
			if v.Licensee == licensee {
				out = append(out, v.ID)
			}
		}
	}
	return out
}

func (s *Server) whatifRoutes(a *http.ServeMux) {
	if !s.whatifOn() {
		return
	}
	// The control room: supervisor, autoridade and admin.
	a.Handle("POST /api/v1/whatif", s.requireRole(store.RoleSupervisor, s.handleWhatifStart))
	a.Handle("GET /api/v1/whatif", s.requireRole(store.RoleSupervisor, s.handleWhatifList))
	a.Handle("GET /api/v1/whatif/{id}", s.requireRole(store.RoleSupervisor, s.handleWhatifStatus))
	a.Handle("POST /api/v1/whatif/{id}/cancel", s.requireRole(store.RoleSupervisor, s.handleWhatifCancel))
	a.Handle("GET /api/v1/whatif/{id}/report", s.requireRole(store.RoleSupervisor, s.handleWhatifReport))
	a.Handle("GET /api/v1/whatif/{id}/files/{name}", s.requireRole(store.RoleSupervisor, s.handleWhatifFile))
	if s.portal == nil {
		return
	}
	// A licensee: their own vehicles and runs.
	a.Handle("POST /api/v1/portal/whatif", s.requireLicensee(s.handleWhatifStart))
	a.Handle("GET /api/v1/portal/whatif", s.requireLicensee(s.handleWhatifList))
	a.Handle("GET /api/v1/portal/whatif/itinerary", s.requireLicensee(s.handlePortalItinerary))
	a.Handle("GET /api/v1/portal/whatif/{id}", s.requireLicensee(s.handleWhatifStatus))
	a.Handle("POST /api/v1/portal/whatif/{id}/cancel", s.requireLicensee(s.handleWhatifCancel))
	a.Handle("GET /api/v1/portal/whatif/{id}/report", s.requireLicensee(s.handleWhatifReport))
	a.Handle("GET /api/v1/portal/whatif/{id}/files/{name}", s.requireLicensee(s.handleWhatifFile))
}

// scopeOf is the licensee a request is scoped to: the user's, on the portal's routes; "" (the
// whole installation) for the control room.
func scopeOf(r *http.Request) string {
	if u := userFrom(r.Context()); u.Role == store.RoleLicensee {
		return u.Licensee
	}
	return ""
}

// handleWhatifStart serves POST /api/v1/whatif and /api/v1/portal/whatif: a multipart form
// with from and to (AAAA-MM-DD, both days included) and, from the control room, the proposed
// profile (file "profile", YAML; none: the profile in force) and geofences (file "geofences",
// a GeoJSON FeatureCollection added to those in force, a feature of the same id replacing
// one); from the portal, the proposed itinerary (file "itinerary": the licensee's itineraries,
// replacing theirs in force), replayed on the licensee's vehicles only. 202 with the run's
// status; 409 while another run is in progress; 400 with what is wrong; 413 for a file over
// 256 KiB.
func (s *Server) handleWhatifStart(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWhatifBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("envio grande demais: cada arquivo pode ter até %d KiB", MaxWhatifUpload>>10))
			return
		}
		s.writeError(w, r, http.StatusBadRequest, "envio interrompido")
		return
	}
	form, status, msg := parseWhatifForm(r.Header.Get("Content-Type"), body)
	if status != 0 {
		s.writeError(w, r, status, msg)
		return
	}
	inForce := s.whatif.InForce()
	inForce.Label = "vigente"
	loc := inForce.Profile.Location()
	from, to, msg := s.whatifPeriod(form.values["from"], form.values["to"], loc)
	if msg != "" {
		s.writeError(w, r, http.StatusBadRequest, msg)
		return
	}
	u := userFrom(r.Context())
	licensee := scopeOf(r)
	proposed := inForce
	proposed.Label = "proposto"
	spec := whatif.JobSpec{From: from, To: to, InForce: inForce, User: u.Name, Licensee: licensee}
	if licensee != "" {
		if _, ok := form.files["profile"]; ok {
			s.writeError(w, r, http.StatusBadRequest, "no portal, a proposta é o itinerário (arquivo itinerary): o perfil legal é o vigente")
			return
		}
		if _, ok := form.files["geofences"]; ok {
			s.writeError(w, r, http.StatusBadRequest, "no portal, a proposta é o itinerário (arquivo itinerary), não outras geocercas")
			return
		}
		it, ok := form.files["itinerary"]
		if !ok {
			s.writeError(w, r, http.StatusBadRequest, "envie o itinerário proposto (arquivo GeoJSON com os itinerários do permissionário)")
			return
		}
		if proposed.Places, err = whatif.WithFeatures(inForce.Places, it.name, it.data, licensee); err != nil {
			s.writeError(w, r, http.StatusBadRequest, err.Error())
			return
		}
		spec.Proposal = fmt.Sprintf("perfil vigente com o itinerário %s", it.name)
		spec.Vehicles = s.licenseeVehicleIDs(licensee)
		if len(spec.Vehicles) == 0 {
			s.writeError(w, r, http.StatusBadRequest, "nenhum veículo cadastrado para o permissionário: não há o que simular")
			return
		}
	} else {
		if _, ok := form.files["itinerary"]; ok {
			s.writeError(w, r, http.StatusBadRequest, "o itinerário proposto vai no arquivo de geocercas (geofences)")
			return
		}
		pf, hasProfile := form.files["profile"]
		gf, hasGeo := form.files["geofences"]
		if !hasProfile && !hasGeo {
			s.writeError(w, r, http.StatusBadRequest, "envie o perfil proposto (YAML) ou geocercas propostas (GeoJSON): sem mudança não há o que comparar")
			return
		}
		if hasProfile {
			p, err := profile.Parse(pf.data, pf.name)
			if err != nil {
				s.writeError(w, r, http.StatusBadRequest, "perfil proposto inválido: "+err.Error())
				return
			}
			if p.SignaturesRequired && inForce.Registry == nil {
				s.writeError(w, r, http.StatusBadRequest, "perfil proposto inválido: exige lotes assinados (signatures_required), mas o monitor não tem cadastro com as chaves dos veículos")
				return
			}
			proposed.Profile, proposed.ProfileYAML, proposed.Path = p, pf.data, pf.name
			spec.Proposal = fmt.Sprintf("%s %s (%s)", p.ID, p.Version, pf.name)
		} else {
			spec.Proposal = "perfil vigente"
		}
		if hasGeo {
			if proposed.Places, err = whatif.WithFeatures(inForce.Places, gf.name, gf.data, ""); err != nil {
				s.writeError(w, r, http.StatusBadRequest, err.Error())
				return
			}
			spec.Proposal += " com as geocercas " + gf.name
		}
	}
	spec.Proposed = proposed
	job, err := s.whatif.Jobs.Start(spec)
	var busy *whatif.BusyError
	switch {
	case errors.As(err, &busy):
		st := busy.Running
		eta := ""
		if !st.ETA.IsZero() {
			eta = ", término previsto às " + st.ETA.In(loc).Format("15:04")
		}
		if licensee != "" {
			s.writeError(w, r, http.StatusConflict, "já há uma simulação em andamento nesta instalação"+eta+"; tente de novo quando ela terminar")
			return
		}
		s.writeError(w, r, http.StatusConflict, fmt.Sprintf("já há uma simulação em andamento, iniciada por %s às %s%s; aguarde o término ou cancele-a",
			st.User, st.Started.In(loc).Format("15:04"), eta))
		return
	case err != nil:
		s.internalError(w, r, err)
		return
	}
	s.log.Info("whatif: run started", "run", job.Status().ID, "user", u.Name, "licensee", licensee, "from", from, "to", to)
	s.writeJSON(w, r, http.StatusAccepted, job.Status())
}

// whatifPeriod reads the period: both days in the profile's time zone, the last not before the
// first nor after today, at most MaxDays days. The message is "" when it is right.
func (s *Server) whatifPeriod(from, to string, loc *time.Location) (time.Time, time.Time, string) {
	f, err1 := time.ParseInLocation(time.DateOnly, strings.TrimSpace(from), loc)
	l, err2 := time.ParseInLocation(time.DateOnly, strings.TrimSpace(to), loc)
	if err1 != nil || err2 != nil {
		return f, l, "período inválido: informe o primeiro e o último dia (from, to) como AAAA-MM-DD"
	}
	if l.Before(f) {
		return f, l, "período inválido: o último dia é anterior ao primeiro"
	}
	today := s.now().In(loc)
	if l.After(time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc)) {
		return f, l, "período inválido: o último dia é depois de hoje (não há dados do futuro)"
	}
	end := l.AddDate(0, 0, 1)
	maxDays := s.whatif.MaxDays
	if maxDays <= 0 {
		maxDays = defaultWhatifDays
	}
	if days := int(end.Sub(f).Round(24*time.Hour) / (24 * time.Hour)); days > maxDays {
		return f, l, fmt.Sprintf("período longo demais: %d dias; o máximo é %d", days, maxDays)
	}
	return f, end, ""
}

// whatifForm is the start's multipart form.
type whatifForm struct {
	values map[string]string
	files  map[string]whatifFile
}

type whatifFile struct {
	name string
	data []byte
}

// parseWhatifForm reads the form; status is 0 when it is well formed.
func parseWhatifForm(contentType string, body []byte) (whatifForm, int, string) {
	f := whatifForm{values: map[string]string{}, files: map[string]whatifFile{}}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return f, http.StatusBadRequest, "envie um formulário multipart/form-data (from, to e os arquivos da proposta)"
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return f, http.StatusBadRequest, "formulário malformado"
		}
		name := p.FormName()
		data, err := io.ReadAll(io.LimitReader(p, MaxWhatifUpload+1))
		if err != nil {
			return f, http.StatusBadRequest, "formulário malformado"
		}
		switch name {
		case "from", "to":
			if len(data) > 64 {
				return f, http.StatusBadRequest, "período inválido: informe o primeiro e o último dia (from, to) como AAAA-MM-DD"
			}
			f.values[name] = string(data)
		case "profile", "geofences", "itinerary":
			if len(data) > MaxWhatifUpload {
				return f, http.StatusRequestEntityTooLarge, fmt.Sprintf("o arquivo %s passa de %d KiB", name, MaxWhatifUpload>>10)
			}
			if len(data) == 0 {
				continue // an empty file input
			}
			fn := uploadName(p.FileName(), name)
			f.files[name] = whatifFile{name: fn, data: data}
		default:
			return f, http.StatusBadRequest, fmt.Sprintf("campo desconhecido %q", name)
		}
	}
	return f, 0, ""
}

// uploadName is the name of an uploaded file as the run states it: its base name, printable,
// at most 80 characters (def when none is left).
func uploadName(fn, def string) string {
	fn = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) && r != '/' && r != '\\' {
			return r
		}
		return -1
	}, fn)
	if rs := []rune(strings.TrimSpace(fn)); len(rs) > 80 {
		fn = string(rs[:80])
	}
	if strings.TrimSpace(fn) == "" {
		return def
	}
	return strings.TrimSpace(fn)
}

// whatifJob finds the run of the request's id in the request's scope: another licensee's run,
// or a licensee's on the portal for one not theirs, is not found.
func (s *Server) whatifJob(w http.ResponseWriter, r *http.Request) (*whatif.Job, bool) {
	j, ok := s.whatif.Jobs.Job(r.PathValue("id"))
	if ok {
		if lic := scopeOf(r); lic != "" && j.Status().Licensee != lic {
			ok = false
		}
	}
	if !ok {
		s.writeError(w, r, http.StatusNotFound, "simulação não encontrada")
	}
	return j, ok
}

// handleWhatifList serves GET /api/v1/whatif and /api/v1/portal/whatif: the runs kept, the
// newest first (on the portal, the licensee's own).
func (s *Server) handleWhatifList(w http.ResponseWriter, r *http.Request) {
	lic := scopeOf(r)
	out := []whatif.JobStatus{}
	for _, j := range s.whatif.Jobs.List() {
		if st := j.Status(); lic == "" || st.Licensee == lic {
			out = append(out, st)
		}
	}
	s.writeJSON(w, r, http.StatusOK, newList(out, ""))
}

// handlePortalItinerary serves GET /api/v1/portal/whatif/itinerary: the licensee's itineraries
// in force, as a GeoJSON FeatureCollection to edit and send back as the proposal (empty when
// they have none).
func (s *Server) handlePortalItinerary(w http.ResponseWriter, r *http.Request) {
	fc := geojson.NewFeatureCollection()
	if places := s.whatif.InForce().Places; places != nil {
		for _, f := range places.Itineraries(licenseeOf(r)) {
			g := geojson.NewFeature(f.Geometry)
			g.Properties = f.Properties
			fc.Append(g)
		}
	}
	b, err := fc.MarshalJSON()
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/geo+json")
	h.Set("Content-Disposition", `attachment; filename="itinerario-`+licenseeOf(r)+`.geojson"`)
	h.Set("Cache-Control", "no-store")
	w.Write(b)
}

// handleWhatifStatus serves GET …/whatif/{id}: the run's state and progress.
func (s *Server) handleWhatifStatus(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.whatifJob(w, r); ok {
		s.writeJSON(w, r, http.StatusOK, j.Status())
	}
}

// handleWhatifCancel serves POST …/whatif/{id}/cancel: the run stops and keeps its record,
// canceled, without a report. 409 when it has already ended.
func (s *Server) handleWhatifCancel(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBodyBytes)); err != nil {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, "corpo da requisição grande demais")
		return
	}
	j, ok := s.whatifJob(w, r)
	if !ok {
		return
	}
	if err := j.Cancel(); err != nil {
		s.writeError(w, r, http.StatusConflict, "a simulação já terminou")
		return
	}
	<-j.Done()
	s.log.Info("whatif: run canceled", "run", j.Status().ID, "user", userFrom(r.Context()).Name)
	s.writeJSON(w, r, http.StatusOK, j.Status())
}

// handleWhatifReport serves GET …/whatif/{id}/report: the finished run's report
// (whatif.ReportJSON). 409 while it runs or when it did not finish.
func (s *Server) handleWhatifReport(w http.ResponseWriter, r *http.Request) {
	j, ok := s.whatifJob(w, r)
	if !ok {
		return
	}
	if st := j.Status(); st.State != whatif.JobDone {
		s.writeError(w, r, http.StatusConflict, "a simulação não tem relatório: "+whatifStateText[st.State])
		return
	}
	b, err := j.Report()
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.Write(b)
}

var whatifStateText = map[string]string{whatif.JobRunning: "ainda em andamento", whatif.JobFailed: "falhou", whatif.JobCanceled: "foi cancelada", whatif.JobDone: "concluída"}

// handleWhatifFile serves GET …/whatif/{id}/files/{name}: a CSV file of the report
// (whatif.CSVFiles) or its PDF (whatif.PDFFile), as a download.
func (s *Server) handleWhatifFile(w http.ResponseWriter, r *http.Request) {
	j, ok := s.whatifJob(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	path, ok := j.File(name)
	if !ok {
		s.writeError(w, r, http.StatusNotFound, "arquivo não encontrado")
		return
	}
	f, err := os.Open(path)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	defer f.Close()
	st := j.Status()
	h := w.Header()
	if strings.HasSuffix(name, ".pdf") {
		h.Set("Content-Type", "application/pdf")
	} else {
		h.Set("Content-Type", "text/csv; charset=utf-8")
	}
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="simulacao-%s-%s-%s"`, st.From, st.To, name))
	h.Set("Cache-Control", "no-store")
	io.Copy(w, f)
}
