package api

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
)

// The registry routes (docs/api.md, "Registry"): licensees, vehicles, devices and documents
// for every signed-in user; drivers — names, CPFs, CNH and card numbers, personal data — for
// fiscal and above, every read audited; edits for supervisors and admins, audited with the
// record before and after (drivers redacted). An edit is validated against the whole registry,
// written to its file atomically and, because the rules engine reads the store on every batch
// (rules.FromRegistry), judged from the next batch on.

// registryRoutes registers the registry routes on the API mux.
func (s *Server) registryRoutes() {
	a := s.api
	a.Handle("GET /api/v1/registry/licensees", s.requireRole(store.RoleViewer, s.handleRegistryLicensees))
	a.Handle("GET /api/v1/registry/licensees/{id}", s.requireRole(store.RoleViewer, s.handleRegistryLicensee))
	a.Handle("PUT /api/v1/registry/licensees/{id}", s.requireRole(store.RoleSupervisor, s.handlePutLicensee))
	a.Handle("DELETE /api/v1/registry/licensees/{id}", s.requireRole(store.RoleSupervisor, s.handleDeleteRecord("licensee")))
	a.Handle("GET /api/v1/registry/vehicles", s.requireRole(store.RoleViewer, s.handleRegistryVehicles))
	a.Handle("GET /api/v1/registry/vehicles/{id}", s.requireRole(store.RoleViewer, s.handleRegistryVehicle))
	a.Handle("PUT /api/v1/registry/vehicles/{id}", s.requireRole(store.RoleSupervisor, s.handlePutVehicle))
	a.Handle("DELETE /api/v1/registry/vehicles/{id}", s.requireRole(store.RoleSupervisor, s.handleDeleteRecord("vehicle")))
	a.Handle("GET /api/v1/registry/drivers", s.requireRole(store.RoleFiscal, s.handleRegistryDrivers))
	a.Handle("GET /api/v1/registry/drivers/{id}", s.requireRole(store.RoleFiscal, s.handleRegistryDriver))
	a.Handle("PUT /api/v1/registry/drivers/{id}", s.requireRole(store.RoleSupervisor, s.handlePutDriver))
	a.Handle("DELETE /api/v1/registry/drivers/{id}", s.requireRole(store.RoleSupervisor, s.handleDeleteRecord("driver")))
	a.Handle("GET /api/v1/registry/devices", s.requireRole(store.RoleViewer, s.handleRegistryDevices))
	a.Handle("GET /api/v1/registry/documents", s.requireRole(store.RoleViewer, s.handleRegistryDocuments))
	a.Handle("GET /api/v1/registry/expiring", s.requireRole(store.RoleViewer, s.handleRegistryExpiring))
}

// Audit actions of the registry routes.
const (
	auditDriverRead       = "registry.driver.read"      // one driver's whole record
	auditDriversList      = "registry.drivers.list"     // the drivers, redacted
	auditExpiringDrivers  = "registry.expiring.drivers" // drivers' CNH and medical-certificate dates
	auditRegistryPrefix   = "registry."                 // + licensee|vehicle|driver + .create|.update|.delete
	defaultExpiringDays   = 30
	maxExpiringDays       = 3650
	registryNotConfigured = "cadastro não configurado no monitor (TRENZINHO_REGISTRY)"
)

// registry answers 404 and returns nil when the monitor runs without a registry.
func (s *Server) registry(w http.ResponseWriter, r *http.Request) *registry.Store {
	if s.reg == nil {
		s.writeError(w, r, http.StatusNotFound, registryNotConfigured)
	}
	return s.reg
}

// Lists.

func (s *Server) handleRegistryLicensees(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	items := reg.Licensees()
	slices.SortFunc(items, func(a, b registry.Licensee) int { return strings.Compare(a.ID, b.ID) })
	writePage(s, w, r, items, func(l registry.Licensee) string { return l.ID })
}

func (s *Server) handleRegistryVehicles(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	items := reg.Vehicles()
	slices.SortFunc(items, func(a, b registry.Vehicle) int { return strings.Compare(a.ID, b.ID) })
	writePage(s, w, r, items, func(v registry.Vehicle) string { return v.ID })
}

// handleRegistryDrivers serves GET /api/v1/registry/drivers (fiscal): the drivers redacted
// (registry.Driver.Redacted), the read audited with the ids listed.
func (s *Server) handleRegistryDrivers(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	items := reg.Drivers() // redacted
	slices.SortFunc(items, func(a, b registry.Driver) int { return strings.Compare(a.ID, b.ID) })
	page, next, ok := pageOf(s, w, r, items, func(d registry.Driver) string { return d.ID })
	if !ok {
		return
	}
	ids := make([]string, len(page))
	for i, d := range page {
		ids[i] = d.ID
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditDriversList, Object: "registry:drivers",
		After: mustJSON(driversRead{Drivers: ids, Redacted: true})})
	s.writeJSON(w, r, http.StatusOK, newList(page, next))
}

// driversRead is what the audit log records of a read of drivers' data: which drivers.
type driversRead struct {
	Drivers  []string `json:"drivers"`
	Redacted bool     `json:"redacted,omitempty"`
	Fields   []string `json:"fields,omitempty"`
}

// registryDevice is a device in GET /api/v1/registry/devices: the registry's device with the
// vehicle it is installed in.
type registryDevice struct {
	Vehicle  string `json:"vehicle"`
	Licensee string `json:"licensee"`
	registry.Device
	Label string `json:"label"` // the device kind in Portuguese
}

func (s *Server) handleRegistryDevices(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	var items []registryDevice
	for _, v := range reg.Vehicles() {
		for _, d := range v.Devices {
			items = append(items, registryDevice{Vehicle: v.ID, Licensee: v.Licensee, Device: d, Label: d.Kind.Label()})
		}
	}
	key := func(d registryDevice) string { return d.Vehicle + "\x00" + string(d.Kind) + "\x00" + d.Serial }
	slices.SortFunc(items, func(a, b registryDevice) int { return strings.Compare(key(a), key(b)) })
	writePage(s, w, r, items, key)
}

// registryDocument is a document in GET /api/v1/registry/documents.
type registryDocument struct {
	Subject registry.Subject `json:"subject"`
	registry.Document
	Label string `json:"label"` // the document kind in Portuguese
	// Current: the document of its kind that counts for its record (valid the longest, or
	// without expiry); the others are its history.
	Current bool   `json:"current"`
	pos     string // sort key
}

func (s *Server) handleRegistryDocuments(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	var items []registryDocument
	add := func(sub registry.Subject, docs []registry.Document) {
		for i, d := range docs {
			items = append(items, registryDocument{Subject: sub, Document: d, Label: d.Kind.Label(),
				Current: currentDocument(docs, i), pos: fmt.Sprintf("%s\x00%s\x00%06d", sub.Kind, sub.ID, i)})
		}
	}
	for _, l := range reg.Licensees() {
		add(registry.Subject{Kind: registry.SubjectLicensee, ID: l.ID}, l.Documents)
	}
	for _, v := range reg.Vehicles() {
		add(registry.Subject{Kind: registry.SubjectVehicle, ID: v.ID}, v.Documents)
	}
	key := func(d registryDocument) string { return d.pos }
	slices.SortFunc(items, func(a, b registryDocument) int { return strings.Compare(a.pos, b.pos) })
	writePage(s, w, r, items, key)
}

// currentDocument reports whether docs[i] is the document of its kind that counts: one without
// expiry, else the one valid the longest (the first of equals).
func currentDocument(docs []registry.Document, i int) bool {
	best := -1
	for j, d := range docs {
		if d.Kind != docs[i].Kind {
			continue
		}
		switch {
		case best < 0:
			best = j
		case docs[best].ValidUntil.IsZero():
		case d.ValidUntil.IsZero() || docs[best].ValidUntil.Before(d.ValidUntil):
			best = j
		}
	}
	return best == i
}

// expiringItem is an item of GET /api/v1/registry/expiring: the registry's Expiry with labels
// in Portuguese.
type expiringItem struct {
	registry.Expiry
	Label        string `json:"label"`         // "inspeção técnica veicular"
	SubjectLabel string `json:"subject_label"` // "veículo PIU-003"
	StatusLabel  string `json:"status_label"`  // "vencido: válido até 20/11/2026 (há 9 dias)"
}

type expiringList struct {
	list[expiringItem]
	AsOf string `json:"as_of"` // the day judged, YYYY-MM-DD in the registry's zone
	Days int    `json:"days"`
}

// handleRegistryExpiring serves GET /api/v1/registry/expiring?days=30: every dated item already
// expired or expiring within days (default 30), sorted by date. Drivers' items (CNH, medical
// certificate: health-related data) are listed for fiscal and above only, and that read is
// audited.
func (s *Server) handleRegistryExpiring(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	q := r.URL.Query()
	days := defaultExpiringDays
	if v := q.Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxExpiringDays {
			s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("parâmetro days inválido: use um inteiro de 0 a %d", maxExpiringDays))
			return
		}
		days = n
	}
	now := s.now()
	u := userFrom(r.Context())
	drivers := u.Role.AtLeast(store.RoleFiscal)
	var items []expiringItem
	for _, e := range reg.Expiring(now, time.Duration(days)*24*time.Hour) {
		if e.Subject.Kind == registry.SubjectDriver && !drivers {
			continue
		}
		items = append(items, expiringItem{Expiry: e, Label: e.Document.Label(), SubjectLabel: e.Subject.Label(), StatusLabel: e.Status()})
	}
	key := func(e expiringItem) string {
		return strings.Join([]string{e.ValidUntil.String(), string(e.Subject.Kind), e.Subject.Vehicle, e.Subject.ID,
			string(e.Document), string(e.Problem)}, "\x00")
	}
	page, next, ok := pageOf(s, w, r, items, key)
	if !ok {
		return
	}
	var ids []string
	for _, e := range page {
		if e.Subject.Kind == registry.SubjectDriver && !slices.Contains(ids, e.Subject.ID) {
			ids = append(ids, e.Subject.ID)
		}
	}
	if len(ids) > 0 {
		s.record(r, store.AuditEntry{User: u.Name, Action: auditExpiringDrivers, Object: "registry:expiring",
			After: mustJSON(driversRead{Drivers: ids, Fields: []string{"cnh_valid_until", "medical_certificate.valid_until"}})})
	}
	s.writeJSON(w, r, http.StatusOK, expiringList{list: newList(page, next),
		AsOf: registry.DateOf(now.In(reg.Location())).String(), Days: days})
}

// One record.

func (s *Server) handleRegistryLicensee(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	l, ok := reg.Licensee(r.PathValue("id"))
	if !ok {
		s.writeError(w, r, http.StatusNotFound, "licenciado não encontrado")
		return
	}
	s.writeJSON(w, r, http.StatusOK, l)
}

func (s *Server) handleRegistryVehicle(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	v, ok := reg.Vehicle(r.PathValue("id"))
	if !ok {
		s.writeError(w, r, http.StatusNotFound, "veículo não encontrado")
		return
	}
	s.writeJSON(w, r, http.StatusOK, v)
}

// handleRegistryDriver serves GET /api/v1/registry/drivers/{id} (fiscal): the whole record,
// personal data included; the read is audited.
func (s *Server) handleRegistryDriver(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	d, ok := reg.Driver(r.PathValue("id"))
	if !ok {
		s.writeError(w, r, http.StatusNotFound, "condutor não encontrado")
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditDriverRead, Object: "driver:" + d.ID,
		After: mustJSON(driversRead{Drivers: []string{d.ID}})})
	s.writeJSON(w, r, http.StatusOK, d)
}

// Edits.

func (s *Server) handlePutLicensee(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	var l registry.Licensee
	if !s.decodeRecord(w, r, &l, &l.ID) {
		return
	}
	before, existed := reg.Licensee(l.ID)
	created, err := reg.PutLicensee(l)
	if err != nil {
		s.fail(w, r, err, "registro")
		return
	}
	after, _ := reg.Licensee(l.ID)
	s.recordEdit(r, "licensee", l.ID, created, jsonIf(existed, before), mustJSON(after))
	s.writeJSON(w, r, putStatus(created), after)
}

func (s *Server) handlePutVehicle(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	var v registry.Vehicle
	if !s.decodeRecord(w, r, &v, &v.ID) {
		return
	}
	before, existed := reg.Vehicle(v.ID)
	// The signing key is `monitor vehicle add`'s (docs/registry.md): kept as it is on file.
	created, err := reg.PutVehicleKeepingKey(v)
	if err != nil {
		s.fail(w, r, err, "registro")
		return
	}
	after, _ := reg.Vehicle(v.ID)
	s.recordEdit(r, "vehicle", v.ID, created, jsonIf(existed, before), mustJSON(after))
	s.writeJSON(w, r, putStatus(created), after)
}

// handlePutDriver serves PUT /api/v1/registry/drivers/{id} (supervisor). The audit log keeps
// the record before and after redacted: it says that the name or CPF changed, not what they
// are.
func (s *Server) handlePutDriver(w http.ResponseWriter, r *http.Request) {
	reg := s.registry(w, r)
	if reg == nil {
		return
	}
	var d registry.Driver
	if !s.decodeRecord(w, r, &d, &d.ID) {
		return
	}
	before, existed := reg.Driver(d.ID)
	created, err := reg.PutDriver(d)
	if err != nil {
		s.fail(w, r, err, "registro")
		return
	}
	after, _ := reg.Driver(d.ID)
	s.recordEdit(r, "driver", d.ID, created, jsonIf(existed, before.Redacted()), mustJSON(after.Redacted()))
	s.writeJSON(w, r, putStatus(created), after)
}

// handleDeleteRecord serves DELETE /api/v1/registry/{licensees|vehicles|drivers}/{id}
// (supervisor): 204, 404 for an unknown id, 409 for a licensee that still has vehicles or
// drivers or a driver still assigned to a vehicle.
func (s *Server) handleDeleteRecord(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reg := s.registry(w, r)
		if reg == nil {
			return
		}
		id := r.PathValue("id")
		var before json.RawMessage
		var err error
		switch kind {
		case "licensee":
			if l, ok := reg.Licensee(id); ok {
				before = mustJSON(l)
			}
			err = reg.DeleteLicensee(id)
		case "vehicle":
			if v, ok := reg.Vehicle(id); ok {
				before = mustJSON(v)
			}
			err = reg.DeleteVehicle(id)
		case "driver":
			if d, ok := reg.Driver(id); ok {
				before = mustJSON(d.Redacted())
			}
			err = reg.DeleteDriver(id)
		}
		if err != nil {
			s.fail(w, r, err, "registro")
			return
		}
		s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditRegistryPrefix + kind + ".delete",
			Object: kind + ":" + id, Before: before})
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) recordEdit(r *http.Request, kind, id string, created bool, before, after json.RawMessage) {
	action := auditRegistryPrefix + kind + ".update"
	if created {
		action = auditRegistryPrefix + kind + ".create"
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: action, Object: kind + ":" + id,
		Before: before, After: after})
}

func jsonIf(ok bool, v any) json.RawMessage {
	if !ok {
		return nil
	}
	return mustJSON(v)
}

func putStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// decodeRecord decodes a record from the request body (decodeBody), and takes its id from the
// path: a body without one gets the path's, a body with another is refused. On error it has
// answered the request.
func (s *Server) decodeRecord(w http.ResponseWriter, r *http.Request, v any, id *string) bool {
	if !s.decodeBody(w, r, v) {
		return false
	}
	path := r.PathValue("id")
	switch {
	case *id == "":
		*id = path
	case *id != path:
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("o id do corpo (%q) difere do id da URL (%q)", *id, path))
		return false
	}
	return true
}

// Paging of the registry lists: items sorted by key, the cursor the last key of a page.

func writePage[T any](s *Server, w http.ResponseWriter, r *http.Request, items []T, key func(T) string) {
	page, next, ok := pageOf(s, w, r, items, key)
	if ok {
		s.writeJSON(w, r, http.StatusOK, newList(page, next))
	}
}

// pageOf cuts the page the request's limit and cursor select out of items, sorted by key. On a
// bad parameter it has answered 400 and reports false.
func pageOf[T any](s *Server, w http.ResponseWriter, r *http.Request, items []T, key func(T) string) (page []T, next string, ok bool) {
	q := r.URL.Query()
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return nil, "", false
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(b) == 0 {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro cursor inválido")
			return nil, "", false
		}
		after := string(b)
		start, _ = slices.BinarySearchFunc(items, after, func(it T, k string) int { return cmp.Compare(key(it), k) })
		if start < len(items) && key(items[start]) == after {
			start++
		}
	}
	page = items[start:]
	if len(page) > limit {
		page = page[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(key(page[limit-1])))
	}
	return page, next, true
}
