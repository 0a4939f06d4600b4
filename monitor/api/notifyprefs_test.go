package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/store"
)

var _ api.NotifyDirectory = (*notifyconfig.Directory)(nil)

// notifyFixture is an API server whose directory combines a notifications file (e-mail to a
// real SMTP server) with what the API stores, and the dispatcher it feeds. The grouping window
// is 1 ms, so that each alert of a test is a message of its own.
type notifyFixture struct {
	*fixture
	smtpd *emailtest.Server
	d     *notify.Dispatcher
	loc   *time.Location
}

func newNotifyFixture(t *testing.T, users string) *notifyFixture {
	t.Helper()
	smtpd := emailtest.Start(t, emailtest.Options{})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, smtpd.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := notifyconfig.Parse(fmt.Appendf(nil, `
base_url: https://monitor.piuma.example
window: 1ms
email: {addr: "%s", username: %s, from: "Monitor <m@piuma.example>", ca_file: %s}
%s`, smtpd.Addr, smtpd.Username, ca, users), "notifications.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, severity, err := file.Dispatcher(notifyconfig.Options{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler),
		Getenv: func(k string) string {
			if k == notifyconfig.EnvSMTPPassword {
				return smtpd.Password
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	f := newFixture(t, func(c *api.Config) {
		dir := notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{File: file, Store: c.Users.(*store.DB), Dispatcher: d, Severity: severity,
			Logger: slog.New(slog.DiscardHandler)})
		if err := dir.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Notify = &api.NotifyConfig{Directory: dir, Location: loc}
	})
	for name, role := range map[string]store.Role{"ana": store.RoleFiscal, "bruno": store.RoleFiscal, "carla": store.RoleFiscal, "chefe": store.RoleSupervisor} {
		if _, err := f.db.CreateUser(context.Background(), name, "senha-de-"+name, role); err != nil {
			t.Fatal(err)
		}
	}
	return &notifyFixture{fixture: f, smtpd: smtpd, d: d, loc: loc}
}

func (f *notifyFixture) as(name string) session {
	_, tok := f.login(name, "senha-de-"+name)
	return session{bearer: tok}
}

// alert notifies a speeding alert now and sends what is due; it returns who got an e-mail.
func (f *notifyFixture) alert(t *testing.T, id string) []string {
	t.Helper()
	before := len(f.smtpd.Mailbox())
	f.d.Notify(notify.Alert{EpisodeID: id, Rule: "speed", Vehicle: "PIU-001", Severity: notify.High, Start: time.Now(),
		Peak: 41, Limit: 20, Unit: "km/h", Lat: -20.84, Lon: -40.72})
	f.d.Flush(context.Background())
	var got []string
	for _, m := range f.smtpd.Mailbox()[before:] {
		got = append(got, m.To...)
	}
	sort.Strings(got)
	return got
}

// quietNow is a span of quiet hours that covers the present moment in Piúma.
func quietNow(loc *time.Location) string {
	h := time.Now().In(loc).Hour()
	return fmt.Sprintf("%02d:00-%02d:00", (h+23)%24, (h+2)%24)
}

// TestSavedPreferencesRouteTheNextAlert: preferences saved through PUT /api/v1/me/notifications
// route the very next alert, delivered to a real SMTP server: the saved record wins over the
// file's entry (Ana's quiet hours, saved, silence her although the file has none), a user only
// in the dashboard is added, a file-only user keeps the file's preferences; a user whose quiet
// hours cover the moment gets nothing, while one in the same quiet hours who is on duty (a shift
// a supervisor added through the schedule API) does, until the shift is removed.
func TestSavedPreferencesRouteTheNextAlert(t *testing.T) {
	f := newNotifyFixture(t, `users:
  - {id: ana, email: ana@piuma.example}
  - {id: dora, email: dora@piuma.example, rules: [speed]}
`)
	if got := f.alert(t, "e0"); !slices.Equal(got, []string{"ana@piuma.example", "dora@piuma.example"}) {
		t.Fatalf("before any saved preferences: %v", got)
	}

	quiet := quietNow(f.loc)
	ana, bruno, carla, chefe := f.as("ana"), f.as("bruno"), f.as("carla"), f.as("chefe")
	for who, body := range map[session]map[string]any{
		ana:   {"email": "ana.fiscal@piuma.example", "quiet_hours": quiet},
		bruno: {"email": "bruno@piuma.example", "quiet_hours": quiet, "min_severity": "high", "channels": []string{"email"}},
		carla: {"email": "carla@piuma.example", "rules": []string{"noise_limit"}},
	} {
		code, body, _ := f.do("PUT", "/api/v1/me/notifications", body, who)
		if code != http.StatusOK {
			t.Fatalf("PUT: %d %s", code, body)
		}
	}
	// Each reads back their own, saved; Dora (not a dashboard user here) is not affected.
	code, body, _ := f.do("GET", "/api/v1/me/notifications", nil, bruno)
	var got struct {
		User, Source string
		Channels     []string
		Severities   map[string]string
		Prefs        struct {
			Email       string
			QuietHours  string `json:"quiet_hours"`
			MinSeverity string `json:"min_severity"`
		}
	}
	if code != http.StatusOK || json.Unmarshal(body, &got) != nil {
		t.Fatalf("GET: %d %s", code, body)
	}
	if got.User != "bruno" || got.Source != "saved" || got.Prefs.Email != "bruno@piuma.example" || got.Prefs.MinSeverity != "high" || got.Prefs.QuietHours != quiet ||
		!slices.Equal(got.Channels, []string{"email"}) || got.Severities["speed"] != "high" {
		t.Errorf("bruno reads %s", body)
	}

	// Ana and Bruno are in quiet hours, Carla follows another rule, Dora keeps the file's.
	if got := f.alert(t, "e1"); !slices.Equal(got, []string{"dora@piuma.example"}) {
		t.Fatalf("quiet hours: %v", got)
	}

	// The schedule: a fiscal may read it, not edit it; the supervisor puts Bruno on duty now.
	const sched = "/api/v1/notifications/schedule"
	now := time.Now().In(f.loc)
	shift := map[string]any{"user": "bruno", "from": now.Add(-time.Hour).Format("2006-01-02T15:04"), "to": now.Add(2 * time.Hour).Format(time.RFC3339)}
	if code, _, _ := f.do("POST", sched, shift, ana); code != http.StatusForbidden {
		t.Errorf("a fiscal adds a shift: %d", code)
	}
	code, body, _ = f.do("POST", sched, shift, chefe)
	var added struct {
		ID        int64
		User      string
		FromLocal string `json:"from_local"`
		OnDuty    bool   `json:"on_duty"`
		Source    string
		CreatedBy string `json:"created_by"`
		From, To  string
	}
	if code != http.StatusCreated || json.Unmarshal(body, &added) != nil || added.ID == 0 || !added.OnDuty || added.Source != "dashboard" ||
		added.CreatedBy != "chefe" || added.FromLocal != shift["from"] {
		t.Fatalf("add: %d %s", code, body)
	}
	code, body, _ = f.do("GET", sched, nil, ana)
	if code != http.StatusOK || !strings.Contains(string(body), `"user":"bruno"`) {
		t.Errorf("a fiscal reads the schedule: %d %s", code, body)
	}
	if code, _, _ := f.do("GET", sched, nil, session{bearer: f.viewer(t)}); code != http.StatusForbidden {
		t.Errorf("a viewer reads the schedule: %d", code)
	}

	// On duty, Bruno gets the alert despite his quiet hours; Ana, in hers, still nothing.
	if got := f.alert(t, "e2"); !slices.Equal(got, []string{"bruno@piuma.example", "dora@piuma.example"}) {
		t.Fatalf("on duty: %v", got)
	}

	id := strconv.FormatInt(added.ID, 10)
	if code, _, _ := f.do("DELETE", sched+"/"+id, nil, ana); code != http.StatusForbidden {
		t.Errorf("a fiscal removes a shift: %d", code)
	}
	if code, body, _ := f.do("DELETE", sched+"/"+id, nil, chefe); code != http.StatusNoContent {
		t.Fatalf("remove: %d %s", code, body)
	}
	if code, _, _ := f.do("DELETE", sched+"/"+id, nil, chefe); code != http.StatusNotFound {
		t.Errorf("removed twice: %d", code)
	}
	// Off duty again: Bruno's quiet hours apply.
	if got := f.alert(t, "e3"); !slices.Equal(got, []string{"dora@piuma.example"}) {
		t.Fatalf("after the shift was removed: %v", got)
	}

	ctx := context.Background()
	for action, want := range map[string]string{"notify.shift.add": "chefe", "notify.shift.delete": "chefe"} {
		entries, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: action}, 10, "")
		if err != nil || len(entries) != 1 || entries[0].User != want || entries[0].Object != "shift:"+id {
			t.Errorf("audit of %s: %+v %v", action, entries, err)
		}
	}
	entries, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "notify.prefs.set", User: "ana"}, 10, "")
	if err != nil || len(entries) != 1 || entries[0].Object != "user:ana" || !strings.Contains(string(entries[0].Before), `"ana@piuma.example"`) ||
		!strings.Contains(string(entries[0].After), `"ana.fiscal@piuma.example"`) {
		t.Errorf("audit of ana's preferences: %+v %v", entries, err)
	}
}

func (f *notifyFixture) viewer(t *testing.T) string {
	_, tok := f.login("maria", viewerPassword)
	return tok
}

// TestPreferencesValidated: a body the API refuses leaves what was saved untouched, with each
// problem named; only the signed-in user's preferences are read or written; a shift is
// checked for its user and its times.
func TestPreferencesValidated(t *testing.T) {
	f := newNotifyFixture(t, "")
	ana, chefe := f.as("ana"), f.as("chefe")
	if code, _, _ := f.do("GET", "/api/v1/me/notifications", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("anonymous: %d", code)
	}
	code, body, _ := f.do("GET", "/api/v1/me/notifications", nil, ana)
	if code != http.StatusOK || !strings.Contains(string(body), `"source":"none"`) {
		t.Fatalf("nothing saved: %d %s", code, body)
	}
	for _, c := range []struct {
		body any
		code int
		path string
	}{
		{map[string]any{"email": "not an address"}, 422, "email"},
		{map[string]any{"email": "Ana <ana@piuma.example>"}, 422, "email"},
		{map[string]any{"telegram": "12ab"}, 422, "telegram"},
		{map[string]any{"min_severity": "urgent"}, 422, "min_severity"},
		{map[string]any{"quiet_hours": "25:00-07:00"}, 422, "quiet_hours"},
		{map[string]any{"rules": []string{"flying"}}, 422, "rules[0]"},
		{map[string]any{"vehicles": []string{"PIU 001"}}, 422, "vehicles[0]"},
		{map[string]any{"vehicles": slices.Repeat([]string{"PIU-001"}, 101)}, 422, "vehicles"},
		{map[string]any{"channels": []string{"sms"}}, 422, "channels[0]"},
		{map[string]any{"user": "bruno"}, 400, ""}, // no writing another's preferences
		{strings.Repeat(" ", 70<<10), 413, ""},
	} {
		code, body, _ := f.do("PUT", "/api/v1/me/notifications", c.body, ana)
		if code != c.code || c.path != "" && !strings.Contains(string(body), `"path":"`+c.path+`"`) {
			t.Errorf("PUT %v: %d %s", c.body, code, body)
		}
	}
	if _, body, _ := f.do("GET", "/api/v1/me/notifications", nil, ana); !strings.Contains(string(body), `"source":"none"`) {
		t.Errorf("a refused body was saved: %s", body)
	}
	code, body, _ = f.do("PUT", "/api/v1/me/notifications", map[string]any{"telegram": " -100123 ", "min_severity": "média",
		"quiet_hours": "22:00-7:00", "vehicles": []string{"PIU-001", "PIU-001"}}, ana)
	if code != http.StatusOK || !strings.Contains(string(body), `"telegram":"-100123"`) || !strings.Contains(string(body), `"min_severity":"medium"`) ||
		!strings.Contains(string(body), `"quiet_hours":"22:00-07:00"`) || !strings.Contains(string(body), `"vehicles":["PIU-001"]`) {
		t.Errorf("normalised: %d %s", code, body)
	}

	// A viewer has preferences too, their own: nothing of Ana's.
	code, body, _ = f.do("GET", "/api/v1/me/notifications", nil, session{bearer: f.viewer(t)})
	if code != http.StatusOK || !strings.Contains(string(body), `"user":"maria"`) || strings.Contains(string(body), "-100123") {
		t.Errorf("the viewer reads %d %s", code, body)
	}

	const sched = "/api/v1/notifications/schedule"
	now := time.Now()
	for _, c := range []struct {
		body map[string]any
		path string
	}{
		{map[string]any{"user": "ninguem", "from": now.Format(time.RFC3339), "to": now.Add(time.Hour).Format(time.RFC3339)}, "user"},
		{map[string]any{"user": "ana", "from": "amanhã", "to": now.Add(time.Hour).Format(time.RFC3339)}, "from"},
		{map[string]any{"user": "ana", "from": now.Format(time.RFC3339), "to": now.Format(time.RFC3339)}, "to"},
		{map[string]any{"user": "ana", "from": now.Format(time.RFC3339), "to": now.Add(8 * 24 * time.Hour).Format(time.RFC3339)}, "to"},
		{map[string]any{"user": "ana", "from": now.Add(-3 * time.Hour).Format(time.RFC3339), "to": now.Add(-time.Hour).Format(time.RFC3339)}, "to"},
		{map[string]any{"user": "ana", "from": now.Add(400 * 24 * time.Hour).Format(time.RFC3339), "to": now.Add(401 * 24 * time.Hour).Format(time.RFC3339)}, "from"},
	} {
		code, body, _ := f.do("POST", sched, c.body, chefe)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"path":"`+c.path+`"`) {
			t.Errorf("POST %v: %d %s", c.body, code, body)
		}
	}
	if code, _, _ := f.do("DELETE", sched+"/0", nil, chefe); code != http.StatusNotFound {
		t.Errorf("removing a file's shift: %d", code)
	}
}
