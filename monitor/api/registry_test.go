package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// regFixture is the API on a real store with a registry file in a temporary directory (the
// example registry unless another is given) and a rules engine wired to the registry as the
// monitor wires it; users maria (viewer), fiscal (fiscal), chefe (supervisor) and admin.
type regFixture struct {
	*fixture
	path    string
	reg     *registry.Store
	engine  *rules.Engine
	viewer  session
	fiscal  session
	super   session
	admin   session
	example []byte
}

const (
	fiscalPassword = "senha-do-fiscal"
	superPassword  = "senha-do-chefe"
)

func newRegFixture(t *testing.T, r *registry.Registry) *regFixture {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.yaml")
	var content []byte
	var err error
	if r == nil {
		content, err = os.ReadFile(filepath.Join("..", "..", "registry", "testdata", "piuma-example.yaml"))
	} else {
		content, err = r.Marshal()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	engine := rules.New(profile.Piuma(), nil)
	engine.SetRegistry(rules.FromRegistry(reg))
	f := &regFixture{fixture: newFixture(t, func(c *api.Config) { c.RegistryStore = reg }), path: path, reg: reg,
		engine: engine, example: content}
	ctx := context.Background()
	if _, err := f.db.CreateUser(ctx, "fiscal", fiscalPassword, store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateUser(ctx, "chefe", superPassword, store.RoleSupervisor); err != nil {
		t.Fatal(err)
	}
	_, tok := f.login("maria", viewerPassword)
	f.viewer = session{bearer: tok}
	_, tok = f.login("fiscal", fiscalPassword)
	f.fiscal = session{bearer: tok}
	_, tok = f.login("chefe", superPassword)
	f.super = session{bearer: tok}
	_, tok = f.login("admin", adminPassword)
	f.admin = session{bearer: tok}
	return f
}

// get sends a GET and decodes a 200 answer into out.
func (f *regFixture) get(path string, auth session, out any) {
	f.t.Helper()
	code, body, _ := f.do("GET", path, nil, auth)
	if code != http.StatusOK {
		f.t.Fatalf("GET %s: %d %s", path, code, body)
	}
	// Decode into a zero value: decoding into a used one keeps the fields an item omits.
	rv := reflect.ValueOf(out).Elem()
	rv.Set(reflect.Zero(rv.Type()))
	if err := json.Unmarshal(body, out); err != nil {
		f.t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// audits returns the audit entries of an action, oldest first.
func (f *regFixture) audits(action string) []store.AuditEntry {
	f.t.Helper()
	es, _, err := f.db.ListAudit(context.Background(), store.AuditFilter{Action: action}, 1000, "")
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Reverse(es)
	return es
}

func TestRegistryRoles(t *testing.T) {
	f := newRegFixture(t, nil)
	vehicle := func() any {
		v, _ := f.reg.Vehicle("PIU-002")
		return v
	}
	routes := []struct {
		method, path string
		body         func() any
		min          store.Role
	}{
		{"GET", "/api/v1/registry/licensees", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/licensees/L1", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/vehicles", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/vehicles/PIU-001", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/devices", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/documents", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/expiring", nil, store.RoleViewer},
		{"GET", "/api/v1/registry/drivers", nil, store.RoleFiscal},
		{"GET", "/api/v1/registry/drivers/D1", nil, store.RoleFiscal},
		{"PUT", "/api/v1/registry/vehicles/PIU-002", vehicle, store.RoleSupervisor},
		{"PUT", "/api/v1/registry/licensees/L1", func() any { l, _ := f.reg.Licensee("L1"); return l }, store.RoleSupervisor},
		{"PUT", "/api/v1/registry/drivers/D2", func() any { d, _ := f.reg.Driver("D2"); return d }, store.RoleSupervisor},
		{"DELETE", "/api/v1/registry/vehicles/PIU-404", nil, store.RoleSupervisor}, // 404 once allowed
	}
	sessions := []struct {
		role store.Role
		s    session
	}{{"", session{}}, {store.RoleViewer, f.viewer}, {store.RoleFiscal, f.fiscal}, {store.RoleSupervisor, f.super}, {store.RoleAdmin, f.admin}}
	for _, rt := range routes {
		for _, s := range sessions {
			var body any
			if rt.body != nil {
				body = rt.body()
			}
			code, resp, _ := f.do(rt.method, rt.path, body, s.s)
			want := http.StatusOK
			switch {
			case s.role == "":
				want = http.StatusUnauthorized
			case !s.role.AtLeast(rt.min):
				want = http.StatusForbidden
			case rt.method == "DELETE":
				want = http.StatusNotFound
			}
			if code != want {
				t.Errorf("%s %s as %q: %d, want %d: %s", rt.method, rt.path, s.role, code, want, resp)
			}
		}
	}
}

func TestRegistryDriversReadsAreRedactedAndAudited(t *testing.T) {
	f := newRegFixture(t, nil)
	before := len(f.audits("registry.drivers.list"))

	// The list: redacted, and the read audited with the ids listed.
	var list struct {
		Items []registry.Driver `json:"items"`
	}
	f.get("/api/v1/registry/drivers", f.fiscal, &list)
	if len(list.Items) != 3 {
		t.Fatalf("%d drivers", len(list.Items))
	}
	d1 := list.Items[0]
	if d1.ID != "D1" || d1.Name != "Maria A. S." || d1.CPF != "***.456.789-**" || d1.CNHNumber != "***" || d1.TachographCard != "**********H101" {
		t.Errorf("listed driver %+v, want it redacted", d1)
	}
	code, body, _ := f.do("GET", "/api/v1/registry/drivers", nil, f.viewer)
	if code != http.StatusForbidden || strings.Contains(string(body), "Maria") {
		t.Errorf("viewer: %d %s", code, body)
	}
	lists := f.audits("registry.drivers.list")
	if len(lists) != before+1 {
		t.Fatalf("%d list audits, want %d (one per read by an allowed user)", len(lists), before+1)
	}
	e := lists[len(lists)-1]
	if e.User != "fiscal" || e.Object != "registry:drivers" || !strings.Contains(string(e.After), `"drivers":["D1","D2","D3"]`) ||
		time.Since(e.Time) > time.Minute || e.RemoteAddr == "" {
		t.Errorf("audit %+v after %s", e, e.After)
	}

	// One driver: the whole record, the read audited.
	var d registry.Driver
	f.get("/api/v1/registry/drivers/D1", f.fiscal, &d)
	if d.Name != "Maria Aparecida dos Santos" || d.CPF != "12345678909" || d.CNHNumber != "10000000001" {
		t.Errorf("driver %+v, want the whole record", d)
	}
	reads := f.audits("registry.driver.read")
	if len(reads) != 1 || reads[0].User != "fiscal" || reads[0].Object != "driver:D1" {
		t.Fatalf("driver read audits %+v", reads)
	}
	if code, _, _ := f.do("GET", "/api/v1/registry/drivers/D404", nil, f.fiscal); code != http.StatusNotFound {
		t.Errorf("unknown driver: %d", code)
	}
	if n := len(f.audits("registry.driver.read")); n != 1 {
		t.Errorf("%d driver read audits after a 404, want 1", n)
	}

	// Lists and audit entries of other records carry no personal data.
	for _, p := range []string{"/api/v1/registry/vehicles", "/api/v1/registry/licensees", "/api/v1/registry/devices",
		"/api/v1/registry/documents", "/api/v1/registry/expiring?days=3650"} {
		_, body, _ := f.do("GET", p, nil, f.viewer)
		for _, pd := range []string{"Maria", "12345678909", "10000000001", "0000000086H101"} {
			if bytes.Contains(body, []byte(pd)) {
				t.Errorf("%s shows %q to a viewer", p, pd)
			}
		}
	}
}

// An edit of a driver is audited with the record before and after redacted.
func TestRegistryDriverEditAuditRedacted(t *testing.T) {
	f := newRegFixture(t, nil)
	d, _ := f.reg.Driver("D2")
	d.CPF = "529.982.247-25"
	d.CNHValidUntil = registry.MustDate("2031-01-31")
	code, body, _ := f.do("PUT", "/api/v1/registry/drivers/D2", d, f.super)
	if code != http.StatusOK {
		t.Fatalf("PUT driver: %d %s", code, body)
	}
	es := f.audits("registry.driver.update")
	if len(es) != 1 || es[0].User != "chefe" || es[0].Object != "driver:D2" {
		t.Fatalf("audit %+v", es)
	}
	all := string(es[0].Before) + string(es[0].After)
	for _, pd := range []string{"João Carlos Ferreira", "98765432100", "52998224725", "10000000002"} {
		if strings.Contains(all, pd) {
			t.Errorf("the audit log keeps %q: %s", pd, all)
		}
	}
	if !strings.Contains(string(es[0].Before), `"cpf":"***.654.321-**"`) || !strings.Contains(string(es[0].After), `"cpf":"***.982.247-**"`) ||
		!strings.Contains(string(es[0].After), `"cnh_valid_until":"2031-01-31"`) {
		t.Errorf("audit before %s after %s", es[0].Before, es[0].After)
	}
	got, _ := f.reg.Driver("D2")
	if got.CPF != "52998224725" {
		t.Errorf("CPF %q, want the new one stored canonical", got.CPF)
	}
}

// Invalid data: 422 with the field paths the registry's validator reports; nothing changes,
// in memory or in the file.
func TestRegistryValidation(t *testing.T) {
	f := newRegFixture(t, nil)
	type problem struct {
		Error  string `json:"error"`
		Fields []struct {
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"fields"`
	}
	cases := []struct {
		name, path string
		body       any
		paths      []string
	}{
		{"CPF check digits", "/api/v1/registry/drivers/D9",
			map[string]any{"name": "Pedro Alves", "cpf": "123.456.789-00", "licensee": "L1"}, []string{"drivers[D9].cpf"}},
		{"alphanumeric CNPJ check digits", "/api/v1/registry/licensees/L9",
			map[string]any{"razao_social": "Trem Novo Ltda", "cnpj": "12.ABC.345/01DE-36"}, []string{"licensees[L9].cnpj"}},
		{"numeric CNPJ check digits", "/api/v1/registry/licensees/L9",
			map[string]any{"razao_social": "Trem Novo Ltda", "cnpj": "11.222.333/0001-80"}, []string{"licensees[L9].cnpj"}},
		{"CNPJ of another licensee", "/api/v1/registry/licensees/L9",
			map[string]any{"razao_social": "Trem Novo Ltda", "cnpj": "12.abc.345/01de-35"}, []string{"licensees[L9].cnpj"}},
		{"unknown licensee and a bad plate", "/api/v1/registry/vehicles/PIU-009",
			map[string]any{"plate": "AB12345", "licensee": "L9"}, []string{"vehicles[PIU-009].plate", "vehicles[PIU-009].licensee"}},
		{"device dates", "/api/v1/registry/vehicles/PIU-009",
			map[string]any{"plate": "QWE1R23", "licensee": "L1", "devices": []any{
				map[string]any{"kind": "slm", "serial": "X-1", "calibration": "2026-05-05", "valid_until": "2026-05-04"}}},
			[]string{"vehicles[PIU-009].devices[0].valid_until"}},
		{"assigned driver of another licensee", "/api/v1/registry/vehicles/PIU-001",
			func() any { v, _ := f.reg.Vehicle("PIU-001"); v.Driver = "D3"; return v }(), []string{"vehicles[PIU-001].driver"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := f.do("PUT", c.path, c.body, f.super)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("%d %s, want 422", code, body)
			}
			var p problem
			if err := json.Unmarshal(body, &p); err != nil || p.Error == "" {
				t.Fatalf("answer %s", body)
			}
			var paths []string
			for _, fe := range p.Fields {
				paths = append(paths, fe.Path)
				if fe.Message == "" {
					t.Errorf("no message for %s", fe.Path)
				}
			}
			slices.Sort(paths)
			want := slices.Clone(c.paths)
			slices.Sort(want)
			if !slices.Equal(paths, want) {
				t.Errorf("paths %v, want %v", paths, want)
			}
			if strings.Contains(string(body), "123.456.789-00") || strings.Contains(string(body), "12345678900") {
				t.Errorf("the answer quotes the CPF: %s", body)
			}
		})
	}
	now, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, f.example) {
		t.Error("the registry file changed after refused edits")
	}
	if _, ok := f.reg.Licensee("L9"); ok {
		t.Error("a refused licensee is in the registry")
	}
	if n := len(f.audits("registry.licensee.create")) + len(f.audits("registry.driver.create")) + len(f.audits("registry.vehicle.create")); n != 0 {
		t.Errorf("%d refused edits audited as made", n)
	}

	// A valid alphanumeric CNPJ is accepted and stored canonical.
	code, body, _ := f.do("PUT", "/api/v1/registry/licensees/L9", map[string]any{"razao_social": "Trem Novo Ltda", "cnpj": "ab.cde.fgh/ijkl-80"}, f.super)
	if code != http.StatusCreated || !strings.Contains(string(body), `"cnpj":"ABCDEFGHIJKL80"`) {
		t.Errorf("alphanumeric CNPJ: %d %s", code, body)
	}

	// Other refusals.
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/api/v1/registry/vehicles/PIU-404", nil, http.StatusNotFound},
		{"GET", "/api/v1/registry/licensees/L404", nil, http.StatusNotFound},
		{"DELETE", "/api/v1/registry/drivers/D404", nil, http.StatusNotFound},
		{"DELETE", "/api/v1/registry/licensees/L1", nil, http.StatusConflict}, // still has vehicles
		{"PUT", "/api/v1/registry/vehicles/PIU-001", map[string]any{"id": "PIU-002", "plate": "ABC1D23", "licensee": "L1"}, http.StatusBadRequest},
		{"PUT", "/api/v1/registry/vehicles/PIU-001", map[string]any{"plate": "ABC1D23", "licensee": "L1", "colour": "red"}, http.StatusBadRequest},
		{"PUT", "/api/v1/registry/vehicles/PIU-001", `{"plate": "ABC1D23",`, http.StatusBadRequest},
		{"PUT", "/api/v1/registry/vehicles/PIU-001", map[string]any{"plate": "ABC1D23", "licensee": "L1",
			"documents": []any{map[string]any{"kind": "csv", "valid_until": "2026-13-01"}}}, http.StatusBadRequest},
		{"PUT", "/api/v1/registry/vehicles/PIU-001", `{"plate":"` + strings.Repeat("A", 70<<10) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		code, body, _ := f.do(c.method, c.path, c.body, f.super)
		if code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.want)
		}
	}
	if _, ok := f.reg.Vehicle("PIU-001"); !ok {
		t.Error("PIU-001 is gone")
	}
}

// A PUT is written to the YAML file (read back by a fresh load) and judged by the engine from
// the next batch on, without a restart.
func TestRegistryPutPersistedAndLive(t *testing.T) {
	f := newRegFixture(t, nil)
	noon := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC) // 12:00 in Piúma
	seq := uint64(0)
	drive := func(from time.Time, seconds int) {
		for i := 0; i < seconds; i += 5 {
			seq++
			b := &wire.Batch{V: 1, Vehicle: "PIU-002", Epoch: "e-1", Seq: seq, Clock: wire.ClockGPS}
			for k := range 5 {
				tt := wire.NewTime(from.Add(time.Duration(i+k) * time.Second))
				kmh, hdop := 20.0, 0.8
				b.Tacho = append(b.Tacho, wire.Tacho{T: tt, SpeedKmh: &kmh})
				b.GPS = append(b.GPS, wire.GPS{T: tt, Lat: -20.8367, Lon: -40.7292 + float64(i+k)*5.56/104040, SpeedKmh: &kmh, HDOP: &hdop, Fix: wire.Fix3D})
			}
			f.engine.Apply(b, from.Add(time.Duration(i+5)*time.Second))
		}
	}
	episodes := func() []rules.Episode {
		c, err := f.engine.Drain()
		if err != nil {
			t.Fatal(err)
		}
		var out []rules.Episode
		for _, ep := range c.Episodes {
			if ep.Rule == "document_expired" {
				out = append(out, ep)
			}
		}
		return out
	}
	drive(noon, 180)
	if eps := episodes(); len(eps) != 0 {
		t.Fatalf("%d document episodes before the edit: %+v", len(eps), eps)
	}

	// The inspection of PIU-002 is found to have run out on 2026-11-01: the supervisor enters
	// it, and moves the vehicle to licensee L2 with its driver.
	var v registry.Vehicle
	f.get("/api/v1/registry/vehicles/PIU-002", f.viewer, &v)
	v.Documents = append(v.Documents, registry.Document{Kind: registry.DocInspecao, Number: "VT-2025-099",
		Issued: registry.MustDate("2025-11-02"), ValidUntil: registry.MustDate("2026-11-01")})
	v.Documents = slices.DeleteFunc(v.Documents, func(d registry.Document) bool { return d.Number == "VT-2026-015" })
	v.Licensee = "L2"
	v.Driver = "D3"
	code, body, _ := f.do("PUT", "/api/v1/registry/vehicles/PIU-002", v, f.super)
	if code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, body)
	}

	// Persisted: a fresh load of the file sees it; the file stays private.
	again, err := registry.Load(f.path)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(again.Vehicles, func(x registry.Vehicle) bool { return x.ID == "PIU-002" })
	if i < 0 || again.Vehicles[i].Licensee != "L2" || again.Vehicles[i].Driver != "D3" ||
		!slices.ContainsFunc(again.Vehicles[i].Documents, func(d registry.Document) bool { return d.Number == "VT-2025-099" }) {
		t.Errorf("the file has %+v", again.Vehicles[i])
	}
	if st, err := os.Stat(f.path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v (%v)", st.Mode(), err)
	}
	es := f.audits("registry.vehicle.update")
	if len(es) != 1 || es[0].User != "chefe" || es[0].Object != "vehicle:PIU-002" ||
		!strings.Contains(string(es[0].Before), "VT-2026-015") || !strings.Contains(string(es[0].After), "VT-2025-099") {
		t.Errorf("audit %+v", es)
	}

	// Live: the next batches are judged with it.
	drive(noon.Add(180*time.Second), 180)
	eps := episodes()
	if len(eps) != 1 || eps[0].Detail != "inspecao" || eps[0].Article != "Art. 32" || eps[0].Penalty != "Art. 45, IV" ||
		eps[0].Document.Number != "VT-2025-099" {
		t.Fatalf("document episodes after the edit: %+v", eps)
	}
	// The licensee changed today (the PUT records the transfer as of today): readings of
	// earlier days stay the old licensee's (the licensee at the time of the fact).
	f.engine.Vehicles(func(v *rules.Vehicle) {
		if v.ID == "PIU-002" && v.Licensee != "L1" {
			t.Errorf("the engine has licensee %q for readings of %s, before the transfer; want L1", v.Licensee, noon.Format(time.DateOnly))
		}
	})
	if i < 0 || again.Vehicles[i].LicenseeSince.IsZero() || len(again.Vehicles[i].LicenseeHistory) != 1 ||
		again.Vehicles[i].LicenseeHistory[0].Licensee != "L1" {
		t.Errorf("the file keeps no link history: %+v", again.Vehicles[i])
	}

	// A delete is written too, and audited.
	if code, body, _ := f.do("DELETE", "/api/v1/registry/vehicles/PIU-003", nil, f.super); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if again, _ := registry.Load(f.path); slices.ContainsFunc(again.Vehicles, func(x registry.Vehicle) bool { return x.ID == "PIU-003" }) {
		t.Error("PIU-003 is still in the file")
	}
	if es := f.audits("registry.vehicle.delete"); len(es) != 1 || !strings.Contains(string(es[0].Before), "ABC2E45") {
		t.Errorf("delete audit %+v", es)
	}
	// A driver assigned to a vehicle cannot go.
	if code, _, _ := f.do("DELETE", "/api/v1/registry/drivers/D3", nil, f.super); code != http.StatusConflict {
		t.Errorf("deleting an assigned driver: %d, want 409", code)
	}
}

func TestRegistryExpiring(t *testing.T) {
	today := registry.DateOf(time.Now().In(registry.DefaultLocation))
	doc := func(kind registry.DocumentKind, number string, days int) registry.Document {
		return registry.Document{Kind: kind, Number: number, ValidUntil: today.AddDays(days)}
	}
	r := &registry.Registry{
		Licensees: []registry.Licensee{{ID: "L1", RazaoSocial: "Trem Ltda", CNPJ: "11222333000181",
			Documents: []registry.Document{doc(registry.DocLicenca, "LIC-31", 31)}}},
		Vehicles: []registry.Vehicle{{ID: "PIU-001", Plate: "ABC1D23", Licensee: "L1",
			Devices: []registry.Device{{Kind: registry.DeviceSLM, Serial: "PCE-1", ValidUntil: today.AddDays(30)}},
			Documents: []registry.Document{
				doc(registry.DocInspecao, "VT-EXP", -1),
				doc(registry.DocCSV, "CSV-HOJE", 0),
				doc(registry.DocAfericaoTacografo, "AF-400", 400),
			}}},
		Drivers: []registry.Driver{{ID: "D1", Name: "Maria Aparecida dos Santos", CPF: "12345678909", Licensee: "L1",
			CNHValidUntil: today.AddDays(5), MedicalCertificate: registry.MedicalCertificate{ValidUntil: today.AddDays(-40)}}},
	}
	f := newRegFixture(t, r)
	type item struct {
		Subject      registry.Subject `json:"subject"`
		Document     string           `json:"document"`
		Number       string           `json:"number"`
		ValidUntil   string           `json:"valid_until"`
		DaysLeft     int              `json:"days_left"`
		Expired      bool             `json:"expired"`
		Problem      string           `json:"problem"`
		Label        string           `json:"label"`
		SubjectLabel string           `json:"subject_label"`
		StatusLabel  string           `json:"status_label"`
	}
	type answer struct {
		Items []item `json:"items"`
		AsOf  string `json:"as_of"`
		Days  int    `json:"days"`
	}
	names := func(a answer) []string {
		var out []string
		for _, it := range a.Items {
			n := it.Number
			if n == "" {
				n = it.Subject.ID + "/" + it.Document
			}
			out = append(out, n)
		}
		return out
	}

	var a answer
	f.get("/api/v1/registry/expiring", f.viewer, &a) // default 30 days; a viewer sees no driver
	if got, want := names(a), []string{"VT-EXP", "CSV-HOJE", "PCE-1"}; !slices.Equal(got, want) {
		t.Errorf("viewer, 30 days: %v, want %v", got, want)
	}
	if a.Days != 30 || a.AsOf != today.String() {
		t.Errorf("days %d as of %s, want 30 as of %s", a.Days, a.AsOf, today)
	}
	exp := a.Items[0]
	if !exp.Expired || exp.DaysLeft != -1 || exp.Problem != "expired" || exp.Label != "inspeção técnica veicular" ||
		exp.SubjectLabel != "veículo PIU-001" || exp.StatusLabel != "vencido: válido até "+today.AddDays(-1).FormatBR()+" (há 1 dia)" {
		t.Errorf("expired item %+v", exp)
	}
	if it := a.Items[1]; it.Expired || it.DaysLeft != 0 || it.Problem != "expiring" || !strings.HasPrefix(it.StatusLabel, "vence hoje") {
		t.Errorf("item expiring today %+v", it)
	}
	if it := a.Items[2]; it.DaysLeft != 30 || it.SubjectLabel != "decibelímetro nº PCE-1 (veículo PIU-001)" || it.Label != "verificação/calibração do equipamento" {
		t.Errorf("item in 30 days %+v", it)
	}
	if len(f.audits("registry.expiring.drivers")) != 0 {
		t.Error("a viewer's list audited as a read of drivers")
	}

	f.get("/api/v1/registry/expiring?days=31", f.fiscal, &a) // a fiscal sees the drivers' dates, audited
	if got, want := names(a), []string{"D1/atestado_medico", "VT-EXP", "CSV-HOJE", "D1/cnh", "PCE-1", "LIC-31"}; !slices.Equal(got, want) {
		t.Errorf("fiscal, 31 days: %v, want %v", got, want)
	}
	es := f.audits("registry.expiring.drivers")
	if len(es) != 1 || es[0].User != "fiscal" || !strings.Contains(string(es[0].After), `"drivers":["D1"]`) {
		t.Errorf("audit %+v", es)
	}
	for _, it := range a.Items {
		if strings.Contains(it.SubjectLabel, "Maria") {
			t.Errorf("an item names the driver: %+v", it)
		}
	}

	f.get("/api/v1/registry/expiring?days=0", f.viewer, &a)
	if got, want := names(a), []string{"VT-EXP", "CSV-HOJE"}; !slices.Equal(got, want) {
		t.Errorf("0 days: %v, want %v", got, want)
	}
	f.get("/api/v1/registry/expiring?days=30&limit=2", f.viewer, &a)
	var page2 struct {
		answer
		NextCursor string `json:"next_cursor"`
	}
	code, body, _ := f.do("GET", "/api/v1/registry/expiring?days=30&limit=2", nil, f.viewer)
	if code != 200 || json.Unmarshal(body, &page2) != nil || page2.NextCursor == "" {
		t.Fatalf("page 1: %d %s", code, body)
	}
	f.get("/api/v1/registry/expiring?days=30&limit=2&cursor="+page2.NextCursor, f.viewer, &a)
	if got := names(a); !slices.Equal(got, []string{"PCE-1"}) {
		t.Errorf("page 2: %v", got)
	}
	for _, bad := range []string{"-1", "x", "3651"} {
		if code, _, _ := f.do("GET", "/api/v1/registry/expiring?days="+bad, nil, f.viewer); code != http.StatusBadRequest {
			t.Errorf("days=%s: %d, want 400", bad, code)
		}
	}
}

// Without a registry the routes say so.
func TestRegistryNotConfigured(t *testing.T) {
	f := newFixture(t, nil)
	_, tok := f.login("admin", adminPassword)
	code, body, _ := f.do("GET", "/api/v1/registry/vehicles", nil, session{bearer: tok})
	if code != http.StatusNotFound || !strings.Contains(errorMessage(t, body), "TRENZINHO_REGISTRY") {
		t.Errorf("%d %s", code, body)
	}
}

func TestRegistryListsAndPaging(t *testing.T) {
	f := newRegFixture(t, nil)
	var devices struct {
		Items []struct {
			Vehicle             string `json:"vehicle"`
			Kind                string `json:"kind"`
			Serial              string `json:"serial"`
			INMETROVerification string `json:"inmetro_verification"`
			Label               string `json:"label"`
		} `json:"items"`
	}
	f.get("/api/v1/registry/devices", f.viewer, &devices)
	if len(devices.Items) != 6 || devices.Items[0].Vehicle != "PIU-001" {
		t.Fatalf("devices %+v", devices.Items)
	}
	i := slices.IndexFunc(devices.Items, func(d struct {
		Vehicle             string `json:"vehicle"`
		Kind                string `json:"kind"`
		Serial              string `json:"serial"`
		INMETROVerification string `json:"inmetro_verification"`
		Label               string `json:"label"`
	}) bool {
		return d.Serial == "VDO-EX-0001"
	})
	if i < 0 || devices.Items[i].INMETROVerification != "2026-02-10" || devices.Items[i].Label != "tacógrafo" {
		t.Errorf("tachograph %+v", devices.Items)
	}
	var docs struct {
		Items []struct {
			Subject registry.Subject `json:"subject"`
			Number  string           `json:"number"`
			Current bool             `json:"current"`
		} `json:"items"`
	}
	f.get("/api/v1/registry/documents", f.viewer, &docs)
	current := map[string]bool{}
	for _, d := range docs.Items {
		current[d.Number] = d.Current
	}
	if len(docs.Items) != 10 || !current["CSV-ES-2026-0101"] || current["CSV-ES-2026-0011"] || !current["LIC-2025/007"] {
		t.Errorf("documents %+v", docs.Items)
	}

	var seen []string
	cursor := ""
	for range 5 {
		var page struct {
			Items      []registry.Vehicle `json:"items"`
			NextCursor string             `json:"next_cursor"`
		}
		f.get("/api/v1/registry/vehicles?limit=2&cursor="+cursor, f.viewer, &page)
		for _, v := range page.Items {
			seen = append(seen, v.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(seen, []string{"PIU-001", "PIU-002", "PIU-003"}) {
		t.Errorf("pages: %v", seen)
	}
	if code, _, _ := f.do("GET", "/api/v1/registry/vehicles?cursor=!!", nil, f.viewer); code != http.StatusBadRequest {
		t.Errorf("bad cursor: %d", code)
	}
}
