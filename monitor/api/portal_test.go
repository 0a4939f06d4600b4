package api_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/registry"
)

var _ api.PortalStore = (*store.DB)(nil)

// listOf is a list answer.
type listOf[T any] struct {
	Items []T `json:"items"`
}

// portalFixture is the case fixture with the licensee's portal: the example registry (PIU-001
// and PIU-002 of L1, PIU-003 of L2), the live fleet of PIU-001 and PIU-003, the electronic
// notice enabled (10 days), and a user of each licensee: "transalegria" (L1) and "gamba" (L2).
type portalFixture struct {
	*caseFixture
	a, b string // the licensees' users' tokens
}

const electronicAct = "Decreto Municipal nº 123/2026 (teste)"

func newPortalFixture(t *testing.T, portal api.PortalConfig) *portalFixture {
	t.Helper()
	one, three, speed, laeq := 1.5, 3.0, 14.0, 71.5
	online := true
	spool := int64(3)
	cf := newCaseFixtureEdit(t, func(y string) string {
		y = confirmUFMP(t, y)
		out := strings.Replace(y, "  electronic: false\n  electronic_act: \"\"", "  electronic: true\n  electronic_act: \""+electronicAct+"\"", 1)
		if out == y {
			t.Fatal("profile: electronic notice not enabled")
		}
		return out
	}, func(c *api.Config, reg *registry.Store) {
		db := c.Episodes.(*store.DB)
		c.RegistryStore = reg
		c.Fleet = fakeFleet{
			{ID: "PIU-001", Licensee: "L1", Online: &online, Lat: &one, Lon: &one, SpeedKmh: &speed, LAeqDB: &laeq, SpoolDepth: &spool},
			{ID: "PIU-003", Licensee: "L2", Online: &online, Lat: &three, Lon: &three, SpeedKmh: &speed, LAeqDB: &laeq},
		}
		portal.Store = db
		c.Portal = &portal
		// Every other optional part too, so that every route of the source is served.
		c.Static = web.Handler(web.Options{})
		everyOptionalPart(t, c, db)
	})
	ctx := context.Background()
	for _, u := range []struct{ name, licensee string }{{"transalegria", "L1"}, {"gamba", "L2"}} {
		if _, err := cf.db.CreateLicenseeUser(ctx, u.name, "senha-de-"+u.name, u.licensee); err != nil {
			t.Fatal(err)
		}
	}
	// Each licensee adhered to the electronic notice, naming its user as its representative.
	src, err := os.ReadFile(cf.reg.Path())
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(src), "representatives: [alegria]", "representatives: [transalegria]", 1)
	y = strings.Replace(y, "    address: Rua das Conchas, 25, Acaiaca, Piúma-ES (endereço fictício)\n",
		"    address: Rua das Conchas, 25, Acaiaca, Piúma-ES (endereço fictício)\n    electronic_adhesion: {term: Termo nº 2/2026, signed_on: 2026-01-10, representatives: [gamba]}\n", 1)
	if err := os.WriteFile(cf.reg.Path(), []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cf.reg.Reload(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"L1", "L2"} {
		if l, ok := cf.reg.Licensee(l); !ok || l.ElectronicAdhesion == nil {
			t.Fatalf("registry: %s has no term of adhesion", l.ID)
		}
	}
	pf := &portalFixture{caseFixture: cf}
	_, pf.a = cf.login("transalegria", "senha-de-transalegria")
	_, pf.b = cf.login("gamba", "senha-de-gamba")
	return pf
}

func (pf *portalFixture) get(t *testing.T, path, token string, out any) int {
	t.Helper()
	code, body, _ := pf.do("GET", path, nil, session{bearer: token})
	if code == http.StatusOK && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, body)
		}
	}
	return code
}

// ciencia is the representative token's electronic ciência of the case id, as the portal takes
// it: the auto opened, its PDF downloaded, "Declaro ciência".
func (pf *portalFixture) ciencia(t *testing.T, token string, id int64) api.PortalCase {
	t.Helper()
	for _, path := range []string{fmt.Sprint("/api/v1/portal/cases/", id), fmt.Sprint("/api/v1/portal/cases/", id, "/pdf")} {
		if code := pf.get(t, path, token, nil); code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	var pc api.PortalCase
	code, body, _ := pf.do("POST", fmt.Sprint("/api/v1/portal/cases/", id, "/ciencia"), map[string]bool{"declaro": true}, session{bearer: token})
	if code != http.StatusOK || json.Unmarshal(body, &pc) != nil {
		t.Fatalf("ciência of case %d: %d %s", id, code, body)
	}
	return pc
}

// file is an attachment of a test filing.
type file struct {
	name string
	data []byte
}

// file posts a filing as token and returns the status and body.
func (pf *portalFixture) file(t *testing.T, token string, caseID int64, kind, text string, files ...file) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("kind", kind)
	_ = mw.WriteField("text", text)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename=%q`, f.name))
		h.Set("Content-Type", "application/octet-stream") // the server sniffs the content
		w, _ := mw.CreatePart(h)
		w.Write(f.data)
	}
	mw.Close()
	code, body, _ := pf.do("POST", "/api/v1/portal/cases/"+strconv.FormatInt(caseID, 10)+"/filings", buf.String(), session{bearer: token},
		"Content-Type", mw.FormDataContentType())
	return code, body
}

// aPDF is a small real PDF (the receipt renderer's).
func aPDF(t *testing.T, words string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := notice.Receipt(&buf, notice.ReceiptInput{Protocolo: words, Kind: "defence", FiledAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// world is what the isolation test seeds: licensee B's ids of every kind, and A's own.
type world struct {
	bEpisode, bDraftIssued, bDraftPending, bDraftDismissed string
	bCase, bFiling                                         int64
	aEpisode, aDraftIssued                                 string
	aCase                                                  int64
}

func (pf *portalFixture) seed(t *testing.T) world {
	t.Helper()
	ctx := context.Background()
	var w world
	ea := testEpisode("PIU-001", "speed", at(2026, 11, 2, 10), false)
	eb := testEpisode("PIU-003", "speed", at(2026, 11, 2, 11), true)
	if err := pf.db.UpsertEpisode(ctx, ea, testEvidence(2)); err != nil {
		t.Fatal(err)
	}
	if err := pf.db.UpsertEpisode(ctx, eb, testEvidence(2)); err != nil {
		t.Fatal(err)
	}
	w.aEpisode, w.bEpisode = ea.ID, eb.ID
	w.aDraftIssued = pf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 2, 10))
	w.bDraftIssued = pf.draft(t, "PIU-003", "L2", "speed", at(2026, 11, 2, 11))
	w.bDraftPending = pf.draft(t, "PIU-003", "L2", "speed", at(2026, 11, 2, 12))
	w.bDraftDismissed = pf.draft(t, "PIU-003", "L2", "speed", at(2026, 11, 2, 13))
	w.aCase = pf.issue(t, w.aDraftIssued, at(2026, 11, 2, 15)).Case.ID
	w.bCase = pf.issue(t, w.bDraftIssued, at(2026, 11, 2, 15)).Case.ID
	pf.setClock(at(2026, 11, 2, 16))
	if code, body, _ := pf.do("POST", "/api/v1/drafts/"+w.bDraftDismissed+"/decision", map[string]string{"decision": "dismiss", "reason": "teste"}, session{bearer: pf.fiscal}); code != http.StatusOK {
		t.Fatalf("dismiss: %d %s", code, body)
	}
	// B declares ciência of its auto and files a defence: B's filing.
	pf.setClock(at(2026, 11, 3, 10))
	pf.ciencia(t, pf.b, w.bCase)
	code, body := pf.file(t, pf.b, w.bCase, "defence", "Defesa de B.")
	var f store.Filing
	if code != http.StatusCreated || json.Unmarshal(body, &f) != nil {
		t.Fatalf("B files: %d %s", code, body)
	}
	w.bFiling = f.ID
	return w
}

// TestPortalIsolation: every route the API registers (read from the source, so that a new one
// cannot be forgotten) is called as licensee A's user with licensee B's ids of every kind —
// episode, draft (issued, under review, dismissed), case, filing — and answers 403 (a route of
// the control room) or 404 (a portal route: another licensee's record is as one that does not
// exist); the portal's lists and stream carry nothing of B's; A's own records answer 200.
func TestPortalIsolation(t *testing.T) {
	pf := newPortalFixture(t, api.PortalConfig{})
	w := pf.seed(t)
	bRun := pf.whatifRun(t, pf.b)
	bIDs := func(path string) []string {
		switch {
		case !strings.Contains(path, "{"):
			return []string{""}
		case strings.HasPrefix(path, "/api/v1/portal/episodes/"):
			return []string{w.bEpisode}
		case strings.HasPrefix(path, "/api/v1/portal/drafts/"):
			return []string{w.bDraftIssued, w.bDraftPending, w.bDraftDismissed, w.aDraftIssued + "x"}
		case strings.HasPrefix(path, "/api/v1/portal/cases/"):
			return []string{strconv.FormatInt(w.bCase, 10)}
		case strings.HasPrefix(path, "/api/v1/portal/filings/"):
			return []string{strconv.FormatInt(w.bFiling, 10)}
		case strings.HasPrefix(path, "/api/v1/portal/whatif/"):
			return []string{bRun}
		}
		return nil
	}
	// Every id of B's, for the routes of the control room (403 whatever the id).
	allB := []string{w.bEpisode, w.bDraftIssued, w.bDraftPending, strconv.FormatInt(w.bCase, 10), "PIU-003", "L2", "gamba", "x"}
	secrets := []string{"PIU-003", "L2", "Ilha do Gamb", w.bEpisode, w.bDraftIssued, w.bDraftPending, w.bDraftDismissed, "Defesa de B", bRun}

	routes := sourceRoutes(t)
	portalRoutes := 0
	for _, r := range routes {
		if _, ok := public[r.pattern]; ok {
			continue
		}
		if r.anyUser && r.pattern != "POST /api/v1/logout" {
			// A route of any signed-in user acts on the user's own account: it takes no id, so
			// nothing of B's is reachable, and it serves A (not 403).
			if strings.Contains(r.path, "{") {
				t.Errorf("%s: %q is open to any user and takes an id: scope it to the user's own records", r.at, r.pattern)
			}
			code, body, _ := pf.do(r.method, r.path, `{}`, session{bearer: pf.a})
			if code == http.StatusForbidden || code == http.StatusUnauthorized || code >= 500 {
				t.Errorf("%s: %s %s as licensee A: %d %s, want served", r.at, r.method, r.path, code, body)
			}
			continue
		}
		if !r.licensee {
			for _, id := range allB {
				path := pathParam.ReplaceAllString(r.path, id)
				code, body, _ := pf.do(r.method, path, `{}`, session{bearer: pf.a})
				if code != http.StatusForbidden && !(r.pattern == "POST /api/v1/logout" && code == http.StatusOK) {
					t.Errorf("%s: %s %s as licensee A: %d %s, want 403", r.at, r.method, path, code, body)
				}
				if r.pattern == "POST /api/v1/logout" {
					_, pf.a = pf.login("transalegria", "senha-de-transalegria")
					break
				}
			}
			continue
		}
		portalRoutes++
		ids := bIDs(r.path)
		if ids == nil {
			t.Errorf("%s: portal route %q has a parameter this test does not know: add licensee B's id for it", r.at, r.pattern)
			continue
		}
		for _, id := range ids {
			path := pathParam.ReplaceAllString(r.path, id)
			if r.pattern == "GET /api/v1/portal/stream" {
				continue // TestPortalStreamScoped
			}
			var body []byte
			var code int
			switch {
			case r.pattern == "POST /api/v1/portal/whatif":
				continue // starts a run of A's own: TestWhatifPortalScope
			case r.method == "POST" && strings.HasPrefix(r.path, "/api/v1/portal/whatif/"):
				code, body, _ = pf.do(r.method, path, `{}`, session{bearer: pf.a})
			case r.pattern == "POST /api/v1/portal/cases/{id}/ciencia":
				code, body, _ = pf.do(r.method, path, `{"declaro": true}`, session{bearer: pf.a})
			case r.method == "POST":
				code, body = pf.file(t, pf.a, w.bCase, "defence", "Defesa de A no auto de B.")
			default:
				code, body, _ = pf.do(r.method, path, nil, session{bearer: pf.a})
			}
			switch {
			case id == "" && code != http.StatusOK:
				t.Errorf("%s %s as A: %d %s, want 200", r.method, path, code, body)
			case id != "" && code != http.StatusNotFound && code != http.StatusForbidden:
				t.Errorf("%s %s as A with B's id: %d %.300s, want 404 or 403", r.method, path, code, body)
			}
			for _, s := range secrets {
				if bytes.Contains(body, []byte(s)) {
					t.Errorf("%s %s as A: the answer shows B's %q: %.500s", r.method, path, s, body)
				}
			}
		}
	}
	if portalRoutes < 10 {
		t.Fatalf("found %d portal routes in the source, want every one of portal.go", portalRoutes)
	}
	// B's case is untouched by A's attempts.
	c, err := pf.db.CaseByID(context.Background(), w.bCase)
	if err != nil || len(c.Events) != 3 || c.Opening == nil || c.Opening.User != "gamba" {
		t.Fatalf("B's case after A's attempts: %+v %v", c, err)
	}
	// A's own: 200, with the positive content.
	var vs listOf[api.PortalVehicle]
	if code := pf.get(t, "/api/v1/portal/vehicles", pf.a, &vs); code != http.StatusOK || len(vs.Items) != 2 || vs.Items[0].ID != "PIU-001" ||
		vs.Items[0].SpeedKmh == nil || *vs.Items[0].SpeedKmh != 14 || vs.Items[0].SpoolDepth == nil || vs.Items[1].ID != "PIU-002" || vs.Items[1].Online != nil {
		t.Errorf("A's vehicles: %d %+v", code, vs.Items)
	}
	for _, path := range []string{"/api/v1/portal/episodes/" + w.aEpisode, "/api/v1/portal/drafts/" + w.aDraftIssued,
		fmt.Sprint("/api/v1/portal/cases/", w.aCase), fmt.Sprint("/api/v1/portal/cases/", w.aCase, "/pdf"), fmt.Sprint("/api/v1/portal/cases/", w.aCase, "/bundle")} {
		if code := pf.get(t, path, pf.a, nil); code != http.StatusOK {
			t.Errorf("A's own %s: %d", path, code)
		}
	}
	// And B's are B's: the same routes answer B.
	if code := pf.get(t, "/api/v1/portal/episodes/"+w.bEpisode, pf.b, nil); code != http.StatusOK {
		t.Errorf("B's episode as B: %d", code)
	}
	if code := pf.get(t, fmt.Sprint("/api/v1/portal/filings/", w.bFiling, "/receipt"), pf.b, nil); code != http.StatusOK {
		t.Errorf("B's receipt as B: %d", code)
	}
	// A draft under review is not even B's to see.
	if code := pf.get(t, "/api/v1/portal/drafts/"+w.bDraftPending, pf.b, nil); code != http.StatusNotFound {
		t.Errorf("a draft under review as its licensee: %d, want 404", code)
	}
	// The control room is unchanged: a viewer still lists every case; nobody of it enters the portal.
	var all listOf[api.CaseView]
	if code := pf.get(t, "/api/v1/cases", pf.viewer, &all); code != http.StatusOK || len(all.Items) != 2 {
		t.Errorf("viewer's cases: %d %d", code, len(all.Items))
	}
	for _, tok := range []string{pf.viewer, pf.fiscal, pf.super, pf.auth} {
		if code := pf.get(t, "/api/v1/portal/cases", tok, nil); code != http.StatusForbidden {
			t.Errorf("a control-room user on the portal: %d, want 403", code)
		}
	}
}

// TestPortalStreamScoped: the portal's stream carries the positions and episodes of the
// licensee's vehicles only — filtered in the hub, server-side — without the agents'
// verifications, and never a draft.
func TestPortalStreamScoped(t *testing.T) {
	pf := newPortalFixture(t, api.PortalConfig{})
	req, _ := http.NewRequest("GET", pf.srv.URL+"/api/v1/portal/stream", nil)
	req.Header.Set("Authorization", "Bearer "+pf.a)
	resp, err := pf.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	rd := bufio.NewReader(resp.Body)
	if line, _ := rd.ReadString('\n'); !strings.HasPrefix(line, "retry:") {
		t.Fatalf("first line %q", line)
	}
	hub := pf.api.Hub()
	one := 1.0
	ep := testEpisode("PIU-003", "speed", at(2026, 11, 2, 11), true)
	hub.PublishLatest("position", "PIU-003", view.Vehicle{ID: "PIU-003", Lat: &one, Lon: &one})
	hub.Publish("episode", map[string]any{"event": "open", "id": ep.ID, "vehicle": "PIU-003"})
	hub.Publish("draft", view.DraftSummary{ID: "PIU-001.speed.9", Vehicle: "PIU-001", Licensee: "L1"})
	hub.Publish("status", map[string]string{"vehicle": "PIU-003", "event": "new_epoch"})
	hub.Publish("episode", map[string]any{"event": "verification", "id": "PIU-001.speed.x", "vehicle": "PIU-001",
		"verification": map[string]string{"by": "joao", "note": "interno"}})
	hub.PublishLatest("position", "PIU-001", view.Vehicle{ID: "PIU-001", Lat: &one, Lon: &one})
	var got []string
	deadline := time.AfterFunc(20*time.Second, func() { resp.Body.Close() })
	defer deadline.Stop()
	for len(got) < 2 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended after %q: %v", got, err)
		}
		if strings.HasPrefix(line, "data: ") {
			got = append(got, strings.TrimSpace(line))
		}
	}
	// Positions may overtake other events (Hub.PublishLatest): the order is not checked.
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, `"PIU-001.speed.x"`) || strings.Contains(joined, `"verification":`) || strings.Contains(joined, "interno") {
		t.Errorf("events %s: want A's episode without its verification", joined)
	}
	if !strings.Contains(joined, `"id":"PIU-001"`) {
		t.Errorf("events %s: want A's position", joined)
	}
	for _, g := range got {
		if strings.Contains(g, "PIU-003") || strings.Contains(g, "speed.9") {
			t.Errorf("A's stream carries %s", g)
		}
	}
}

// TestPortalElectronicNotice: with notification.electronic, an issued auto waits in the portal;
// opening it is recorded (server's time, address, user) and delivers nothing; the ciência is
// the representative's "Declaro ciência" after the PDF was downloaded — refused without the
// declaration (400), before the download (pdf_not_served), by a user of the licensee the term of
// adhesion does not name (403, not_a_representative) — and then the case is notified
// (electronic) that day, the defence deadline runs from it, and the audit holds the opening,
// the serving with the PDF's hash and the ciência. An auto without a ciência within the
// profile's 10 days falls back to the other means and a late declaration delivers nothing.
func TestPortalElectronicNotice(t *testing.T) {
	pf := newPortalFixture(t, api.PortalConfig{})
	ctx := context.Background()
	d1 := pf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 1, 10))
	d2 := pf.draft(t, "PIU-002", "L1", "speed", at(2026, 11, 1, 11))
	c1 := pf.issue(t, d1, at(2026, 11, 2, 15)).Case.ID // a Monday
	c2 := pf.issue(t, d2, at(2026, 11, 2, 15)).Case.ID
	if _, err := pf.db.CreateLicenseeUser(ctx, "caixa", "senha-de-caixa", "L1"); err != nil {
		t.Fatal(err)
	}
	_, caixa := pf.login("caixa", "senha-de-caixa")
	declare := func(token string, id int64, body any) (int, string) {
		code, b, _ := pf.do("POST", fmt.Sprint("/api/v1/portal/cases/", id, "/ciencia"), body, session{bearer: token})
		return code, string(b)
	}

	// Listed before it is opened: the number and that it waits, not its content.
	pf.setClock(at(2026, 11, 3, 9))
	var list listOf[api.PortalCase]
	if code := pf.get(t, "/api/v1/portal/cases", pf.a, &list); code != http.StatusOK || len(list.Items) != 2 {
		t.Fatalf("list: %d %+v", code, list)
	}
	for _, c := range list.Items {
		if !c.AwaitingCiencia || c.Opened || c.Articles != nil || c.Electronic == nil || c.Electronic.Until != "2026-11-12" {
			t.Errorf("before the opening: %+v", c)
		}
	}

	// Opened on Wednesday 4 November, 10:17:05: recorded, not delivered.
	opened := time.Date(2026, 11, 4, 10, 17, 5, 0, piuma)
	pf.setClock(opened)
	var pc api.PortalCase
	if code := pf.get(t, fmt.Sprint("/api/v1/portal/cases/", c1), pf.a, &pc); code != http.StatusOK {
		t.Fatalf("open: %d", code)
	}
	if pc.State != "issued" || pc.Notified != "" || pc.Deadline != nil || !pc.Opened || !pc.AwaitingCiencia || pc.CanFile != "" ||
		!strings.Contains(pc.AdhesionTerm, "Termo de adesão") || !pc.Representative || !strings.Contains(pc.Electronic.Text, "Abrir o auto não é ciência") {
		t.Errorf("after the opening: %+v", pc)
	}
	var other api.PortalCase
	if pf.get(t, fmt.Sprint("/api/v1/portal/cases/", c1), caixa, &other); other.Representative || other.AdhesionTerm == "" {
		t.Errorf("caixa shown as a representative: %+v", other)
	}
	// Refused: no declaration; before the PDF; by a user the term does not name.
	for _, x := range []struct {
		token string
		body  any
		code  int
		want  string
	}{
		{pf.a, map[string]any{}, 400, "declaração expressa"},
		{pf.a, map[string]any{"declaro": false}, 400, "declaração expressa"},
		{pf.a, map[string]any{"declaro": true}, 409, `"pdf_not_served"`},
		{caixa, map[string]any{"declaro": true}, 403, `"not_a_representative"`},
	} {
		if code, body := declare(x.token, c1, x.body); code != x.code || !strings.Contains(body, x.want) {
			t.Errorf("ciência %v: %d %s, want %d %s", x.body, code, body, x.code, x.want)
		}
	}
	if c, _ := pf.db.CaseByID(ctx, c1); c.State != "issued" {
		t.Fatalf("a refused ciência delivered the auto: %s", c.State)
	}
	// The PDF downloaded at 10:20, the ciência declared at 10:21: notified on the 4th. 10 days
	// from 4 November, the day excluded: Saturday 14 November; the next business day is Monday 16.
	pf.setClock(opened.Add(3 * time.Minute))
	code, pdf, h := pf.do("GET", fmt.Sprint("/api/v1/portal/cases/", c1, "/pdf"), nil, session{bearer: pf.a})
	if code != http.StatusOK {
		t.Fatalf("pdf: %d", code)
	}
	sum := sha256.Sum256(pdf)
	if got := h.Get(api.HeaderPDFSHA256); got != "" && got != hex.EncodeToString(sum[:]) {
		t.Errorf("the PDF's hash header %s is not the bytes' %x", got, sum)
	}
	pf.setClock(opened.Add(4 * time.Minute))
	code, body := declare(pf.a, c1, map[string]any{"declaro": true})
	if code != http.StatusOK || json.Unmarshal([]byte(body), &pc) != nil {
		t.Fatalf("ciência: %d %s", code, body)
	}
	if pc.State != "notified" || pc.Notified != "2026-11-04" || pc.Mode != "electronic" || pc.Deadline == nil || pc.Deadline.Date != "2026-11-16" ||
		pc.AwaitingCiencia || pc.CanFile != "defence" || len(pc.Articles) == 0 {
		t.Errorf("after the ciência: %+v deadline %+v", pc, pc.Deadline)
	}
	if code, body := declare(pf.a, c1, map[string]any{"declaro": true}); code != http.StatusConflict || !strings.Contains(body, `"already_delivered"`) {
		t.Errorf("a second ciência: %d %s", code, body)
	}
	var staff api.CaseView
	if code := pf.get(t, fmt.Sprint("/api/v1/cases/", c1), pf.fiscal, &staff); code != http.StatusOK {
		t.Fatalf("staff view: %d", code)
	}
	e := staff.Electronic
	if e == nil || e.Opening == nil || !e.Opening.At.Equal(opened) || e.Opening.User != "transalegria" || e.Opening.RemoteAddr != "127.0.0.1" ||
		e.Fallback || !strings.Contains(e.Text, "Ciência") || !strings.Contains(e.Text, "por transalegria") || staff.Notified != "2026-11-04" || staff.Deadline.Date != "2026-11-16" {
		t.Errorf("the staff's case view: %+v %+v", staff.Electronic, staff.Deadline)
	}
	for action, n := range map[string]int{"case.opened": 1, "case.pdf_served": 1, "case.ciencia": 1, "case.notify": 1} {
		rows, _, err := pf.db.ListAudit(ctx, store.AuditFilter{Action: action}, 10, "")
		if err != nil || len(rows) != n || rows[0].User != "transalegria" || rows[0].RemoteAddr != "127.0.0.1" {
			t.Errorf("audit %s: %+v %v, want %d by transalegria", action, rows, err, n)
		}
	}
	ci, _, _ := pf.db.ListAudit(ctx, store.AuditFilter{Action: "case.ciencia"}, 10, "")
	if len(ci) != 1 || !strings.Contains(string(ci[0].After), hex.EncodeToString(sum[:])) || !strings.Contains(string(ci[0].After), "Termo de adesão") {
		t.Errorf("the ciência's audit names neither the PDF served nor the term: %+v", ci)
	}

	// The other auto gets no ciência within the 10 days (until 12 November): on the 13th the
	// case view shows the fallback to the other means.
	pf.setClock(at(2026, 11, 13, 9))
	if code := pf.get(t, fmt.Sprint("/api/v1/cases/", c2), pf.fiscal, &staff); code != http.StatusOK {
		t.Fatal(code)
	}
	if staff.Electronic == nil || !staff.Electronic.Fallback || !strings.Contains(staff.Electronic.Text, "notificar por outro meio") || staff.State != "issued" {
		t.Errorf("after the window: %+v", staff.Electronic)
	}
	// On the 12th it was still waiting.
	pf.setClock(at(2026, 11, 12, 23))
	pf.get(t, fmt.Sprint("/api/v1/cases/", c2), pf.fiscal, &staff)
	if staff.Electronic == nil || staff.Electronic.Fallback {
		t.Errorf("on the last day: %+v", staff.Electronic)
	}
	// A late ciência delivers nothing; the mail does.
	pf.setClock(at(2026, 11, 13, 10))
	var late api.PortalCase
	if code := pf.get(t, fmt.Sprint("/api/v1/portal/cases/", c2), pf.a, &late); code != http.StatusOK || late.State != "issued" || late.Deadline != nil ||
		late.Electronic == nil || !late.Electronic.Fallback || late.AwaitingCiencia {
		t.Errorf("late opening: %d %+v", code, late)
	}
	pf.get(t, fmt.Sprint("/api/v1/portal/cases/", c2, "/pdf"), pf.a, nil)
	if code, body := declare(pf.a, c2, map[string]any{"declaro": true}); code != http.StatusConflict || !strings.Contains(body, `"not_awaiting_ciencia"`) {
		t.Errorf("a late ciência: %d %s", code, body)
	}
	if c, _ := pf.db.CaseByID(ctx, c2); c.State != "issued" {
		t.Errorf("late ciência: state %s", c.State)
	}
	pf.mustAct(t, d2, map[string]any{"action": "notify", "mode": "mail", "date": "2026-11-13"})
}

// TestPortalDefenceOnline: a defence with a PDF attachment filed online moves the case to
// defence_filed on the day of filing, stores the file with its SHA-256, and returns a receipt
// (protocolo) whose PDF text names the auto, the protocolo and the hash; attachments that are
// not PDF/JPEG/PNG by content, too large, or refused by the scan hook are refused; an appeal
// against the rejected defence moves the case to appeal_filed.
func TestPortalDefenceOnline(t *testing.T) {
	pf := newPortalFixture(t, api.PortalConfig{MaxFileBytes: 64 << 10, MaxFiles: 2,
		ScanCommand: []string{"sh", "-c", `if grep -q EICAR-TESTE "$0"; then exit 1; fi`}})
	ctx := context.Background()
	d := pf.draft(t, "PIU-001", "L1", "speed", at(2026, 11, 1, 10))
	id := pf.issue(t, d, at(2026, 11, 2, 15)).Case.ID
	// Before delivery: no defence yet.
	pf.setClock(at(2026, 11, 3, 9))
	if code, body := pf.file(t, pf.a, id, "defence", "Cedo demais."); code != http.StatusConflict {
		t.Errorf("defence before the notice: %d %s", code, body)
	}
	pf.setClock(at(2026, 11, 4, 10))
	pf.ciencia(t, pf.a, id)

	pdf := aPDF(t, "Documento anexo da defesa")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, bad := range []struct {
		name  string
		files []file
		code  int
		msg   string
	}{
		{"an executable", []file{{"defesa.pdf", []byte("MZ\x90\x00 not a pdf")}}, 400, "não é PDF, JPEG nem PNG"},
		{"too large", []file{{"grande.pdf", append([]byte("%PDF-1.4\n"), make([]byte, 65<<10)...)}}, 400, "passa de"},
		{"three files", []file{{"a.pdf", pdf}, {"b.pdf", pdf}, {"c.pdf", pdf}}, 400, "no máximo 2 anexos"},
		{"infected", []file{{"virus.pdf", []byte("%PDF-1.4\nEICAR-TESTE\n")}}, 422, "antivírus"},
	} {
		code, body := pf.file(t, pf.a, id, "defence", "Texto.", bad.files...)
		if code != bad.code || !strings.Contains(string(body), bad.msg) {
			t.Errorf("%s: %d %s", bad.name, code, body)
		}
	}
	if c, _ := pf.db.CaseByID(ctx, id); c.State != "notified" {
		t.Fatalf("a refused filing moved the case: %s", c.State)
	}

	filedAt := time.Date(2026, 11, 9, 16, 42, 30, 0, piuma)
	pf.setClock(filedAt)
	code, body := pf.file(t, pf.a, id, "defence", "O veículo estava parado no ponto de embarque; junto o documento.",
		file{"comprovante.pdf", pdf}, file{"foto.png", png})
	var f struct {
		store.Filing
		Receipt string `json:"receipt"`
	}
	if code != http.StatusCreated || json.Unmarshal(body, &f) != nil {
		t.Fatalf("filing: %d %s", code, body)
	}
	sum := sha256.Sum256(pdf)
	if f.Protocolo != fmt.Sprintf("PROT-2026/%06d", f.ID) || len(f.Files) != 2 || f.Files[0].SHA256 != hex.EncodeToString(sum[:]) ||
		f.Files[0].ContentType != "application/pdf" || f.Files[1].ContentType != "image/png" || f.Files[0].Size != int64(len(pdf)) {
		t.Errorf("filing answer %+v", f)
	}
	c, err := pf.db.CaseByID(ctx, id)
	if err != nil || c.State != "defence_filed" || c.DefenceFiled != "2026-11-09" {
		t.Fatalf("case after the filing: %s %s %v", c.State, c.DefenceFiled, err)
	}
	stored, err := pf.db.Filing(ctx, f.ID, true)
	if err != nil || !bytes.Equal(stored.Files[0].Data, pdf) || stored.Files[0].SHA256 != hex.EncodeToString(sum[:]) || stored.User != "transalegria" {
		t.Fatalf("stored filing: %+v %v", stored, err)
	}
	code, receipt, h := pf.do("GET", f.Receipt, nil, session{bearer: pf.a})
	if code != http.StatusOK || h.Get("Content-Type") != "application/pdf" {
		t.Fatalf("receipt: %d %s", code, h.Get("Content-Type"))
	}
	text := flat(pdfText(t, receipt))
	for _, want := range []string{"Comprovante de protocolo eletrônico", f.Protocolo, c.Notice, "Defesa apresentada pelo portal do permissionário",
		"Trenzinho Alegria da Orla Ltda", "transalegria", "09/11/2026 16:42:30", "comprovante.pdf", hex.EncodeToString(sum[:]), "foto.png (image/png"} {
		if !strings.Contains(text, want) {
			t.Errorf("the receipt lacks %q:\n%s", want, text)
		}
	}
	// The control room reads the defence and its attachments, to decide on it; a viewer does not.
	var staff listOf[store.Filing]
	if code := pf.get(t, fmt.Sprint("/api/v1/cases/", id, "/filings"), pf.fiscal, &staff); code != http.StatusOK || len(staff.Items) != 1 ||
		!strings.Contains(staff.Items[0].Text, "ponto de embarque") || staff.Items[0].Files[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the fiscal's view of the filings: %d %+v", code, staff.Items)
	}
	code, got, h := pf.do("GET", fmt.Sprint("/api/v1/filings/", f.ID, "/files/1"), nil, session{bearer: pf.fiscal})
	if code != http.StatusOK || !bytes.Equal(got, pdf) || h.Get("Content-Type") != "application/pdf" || h.Get("X-Content-SHA256") != hex.EncodeToString(sum[:]) {
		t.Errorf("the attachment: %d %s %s", code, h.Get("Content-Type"), h.Get("X-Content-SHA256"))
	}
	if code := pf.get(t, fmt.Sprint("/api/v1/cases/", id, "/filings"), pf.viewer, nil); code != http.StatusForbidden {
		t.Errorf("a viewer reads the filings: %d", code)
	}
	if n, _, _ := pf.db.ListAudit(ctx, store.AuditFilter{Action: "case.filing.file"}, 10, ""); len(n) != 1 {
		t.Errorf("%d attachment reads audited, want 1", len(n))
	}

	// A second defence: refused.
	if code, _ := pf.file(t, pf.a, id, "defence", "De novo."); code != http.StatusConflict {
		t.Errorf("second defence: %d", code)
	}
	// The defence is rejected and the decision notified: the appeal is filed online too.
	pf.setClock(at(2026, 11, 20, 10))
	pf.mustAct(t, d, map[string]any{"action": "decide", "outcome": "rejected", "text": "Indeferida.", "date": "2026-11-20"})
	pf.setClock(at(2026, 11, 23, 10))
	pf.mustAct(t, d, map[string]any{"action": "notify_decision", "date": "2026-11-23"})
	pf.setClock(at(2026, 11, 25, 11))
	if code, body := pf.file(t, pf.a, id, "appeal", "Recorro da decisão."); code != http.StatusCreated {
		t.Fatalf("appeal: %d %s", code, body)
	}
	if c, _ := pf.db.CaseByID(ctx, id); c.State != "appeal_filed" || c.Appealed != "2026-11-25" {
		t.Errorf("after the appeal: %s %s", c.State, c.Appealed)
	}
	var pc api.PortalCase
	pf.get(t, fmt.Sprint("/api/v1/portal/cases/", id), pf.a, &pc)
	if len(pc.Filings) != 2 || pc.Filings[1].Kind != "appeal" || pc.CanFile != "" {
		t.Errorf("portal case after the appeal: %+v", pc)
	}
}

// TestLicenseeUsers: an admin creates a licensee's user for a licensee of the registry only;
// the role cannot be given to an existing user; the user signs in and its role is licensee.
func TestLicenseeUsers(t *testing.T) {
	pf := newPortalFixture(t, api.PortalConfig{})
	_, admin := pf.login("admin", adminPassword)
	for _, bad := range []map[string]string{
		{"name": "x1", "password": "senha-longa-1", "role": "licensee"},
		{"name": "x2", "password": "senha-longa-2", "role": "licensee", "licensee": "L9"},
		{"name": "x3", "password": "senha-longa-3", "role": "viewer", "licensee": "L1"},
	} {
		if code, body, _ := pf.do("POST", "/api/v1/users", bad, session{bearer: admin}); code != http.StatusBadRequest {
			t.Errorf("%v: %d %s", bad, code, body)
		}
	}
	code, body, _ := pf.do("POST", "/api/v1/users", map[string]string{"name": "orla", "password": "senha-da-orla", "role": "licensee", "licensee": "L1"}, session{bearer: admin})
	if code != http.StatusCreated || !strings.Contains(string(body), `"licensee":"L1"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body, _ := pf.do("PATCH", "/api/v1/users/maria", map[string]string{"role": "licensee"}, session{bearer: admin}); code != http.StatusBadRequest {
		t.Errorf("viewer made licensee: %d %s", code, body)
	}
	_, tok := pf.login("orla", "senha-da-orla")
	var me api.PortalMe
	if code := pf.get(t, "/api/v1/portal/me", tok, &me); code != http.StatusOK || me.Licensee != "L1" || me.RazaoSocial != "Trenzinho Alegria da Orla Ltda" ||
		!me.Electronic || me.ElectronicAct != electronicAct || me.ElectronicDays != 10 || !strings.Contains(me.Verify.Command, "monitor verify --key ") {
		t.Errorf("me: %d %+v", code, me)
	}
	if code, _, _ := pf.do("POST", "/api/v1/logout", nil, session{bearer: tok}); code != http.StatusOK {
		t.Errorf("a licensee's logout: %d", code)
	}
}
