package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram/telegramtest"
	"github.com/trenzinho/trenzinho/monitor/store"
)

var _ api.TriageStore = (*store.DB)(nil)

type triageAnswer struct {
	State          string `json:"state"`
	AcknowledgedBy string `json:"acknowledged_by"`
	AcknowledgedAt string `json:"acknowledged_at"`
	Assignee       string `json:"assignee"`
	ClearedBy      string `json:"cleared_by"`
	ClearReason    string `json:"clear_reason"`
	EscalatedAt    string `json:"escalated_at"`
	History        []struct {
		At, User, Act, Assignee, Text string
	} `json:"history"`
}

func newTriageFixture(t *testing.T) (*fixture, map[string]session) {
	t.Helper()
	f := newFixture(t, func(c *api.Config) { c.Triage = c.Episodes.(*store.DB) })
	ctx := context.Background()
	for name, role := range map[string]store.Role{"ana": store.RoleFiscal, "bia": store.RoleFiscal, "sup": store.RoleSupervisor} {
		if _, err := f.db.CreateUser(ctx, name, "senha-longa-de-"+name, role); err != nil {
			t.Fatal(err)
		}
	}
	s := map[string]session{}
	for name, pw := range map[string]string{"ana": "senha-longa-de-ana", "bia": "senha-longa-de-bia", "sup": "senha-longa-de-sup",
		"maria": viewerPassword, "admin": adminPassword} {
		c, _ := f.login(name, pw)
		s[name] = session{cookie: c}
	}
	return f, s
}

func (f *fixture) triage(t *testing.T, id string, as session) triageAnswer {
	t.Helper()
	code, b, _ := f.do("GET", "/api/v1/episodes/"+url.PathEscape(id)+"/triage", nil, as)
	if code != http.StatusOK {
		t.Fatalf("GET triage: %d %s", code, b)
	}
	var a triageAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestTriageThroughTheAPI: acknowledge, assign, comment and clear an alert through the HTTP
// API on a real store, as the roles allow; refused acts change nothing; the alerts list
// filters by state and assignee; every act is in the audit log with who and from where.
func TestTriageThroughTheAPI(t *testing.T) {
	f, as := newTriageFixture(t)
	ep := testEpisode("PIU-001", "speed", t0, false)
	other := testEpisode("PIU-002", "speed", t0.Add(time.Minute), true)
	ctx := context.Background()
	if err := f.db.UpsertEpisode(ctx, ep, testEvidence(2)); err != nil {
		t.Fatal(err)
	}
	if err := f.db.UpsertEpisode(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/episodes/" + url.PathEscape(ep.ID)

	if a := f.triage(t, ep.ID, as["maria"]); a.State != "novo" || a.History == nil || len(a.History) != 0 {
		t.Fatalf("untouched: %+v", a)
	}
	steps := []struct {
		who, path string
		body      any
		want      int
		state     string
	}{
		{"maria", "/ack", nil, 403, "novo"}, // a viewer reads, does not act
		{"ana", "/ack", map[string]string{"user": "x"}, 400, "novo"},
		{"ana", "/ack", nil, 200, "reconhecido"},
		{"bia", "/ack", "{}", 409, "reconhecido"},
		{"ana", "/assign", map[string]string{"user": "maria"}, 400, "reconhecido"}, // a viewer cannot take it
		{"ana", "/assign", map[string]string{"text": "x"}, 400, "reconhecido"},
		{"ana", "/assign", map[string]string{"user": "bia"}, 200, "atribuido"},
		{"bia", "/comments", map[string]string{"text": "A caminho da orla."}, 200, "atribuido"},
		{"bia", "/comments", map[string]string{"text": "   "}, 400, "atribuido"},
		{"bia", "/comments", map[string]any{"text": "x", "edit": 1}, 400, "atribuido"},
		{"bia", "/clear", map[string]string{}, 400, "atribuido"},
		{"bia", "/clear", map[string]string{"reason": "Verificado no local: o veículo já estava parado."}, 200, "encerrado"},
		{"ana", "/comments", map[string]string{"text": "Ciente."}, 200, "encerrado"},
		{"ana", "/assign", map[string]string{"user": "ana"}, 409, "encerrado"},
	}
	for i, s := range steps {
		code, b, _ := f.do("POST", base+s.path, s.body, as[s.who])
		if code != s.want {
			t.Fatalf("step %d: %s POST %s %v: %d %s, want %d", i, s.who, s.path, s.body, code, b, s.want)
		}
		if code >= 400 {
			errorMessage(t, b)
		}
		if a := f.triage(t, ep.ID, as["maria"]); a.State != s.state {
			t.Fatalf("after step %d: state %s, want %s", i, a.State, s.state)
		}
	}
	a := f.triage(t, ep.ID, as["maria"])
	if a.AcknowledgedBy != "ana" || a.AcknowledgedAt == "" || a.Assignee != "bia" || a.ClearedBy != "bia" ||
		!strings.Contains(a.ClearReason, "já estava parado") {
		t.Errorf("triage %+v", a)
	}
	var acts []string
	for _, h := range a.History {
		acts = append(acts, h.User+":"+h.Act)
	}
	if got := strings.Join(acts, " "); got != "ana:ack ana:assign bia:comment bia:clear ana:comment" {
		t.Errorf("history %s", got)
	}

	// The list: each episode with its triage; filters by state and by "assigned to me".
	list := func(q string, who string) []string {
		t.Helper()
		code, b, _ := f.do("GET", "/api/v1/episodes?"+q, nil, as[who])
		if code != 200 {
			t.Fatalf("GET episodes?%s: %d %s", q, code, b)
		}
		var l struct {
			Items []struct {
				ID     string
				Triage struct{ State, Assignee string }
			}
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range l.Items {
			out = append(out, it.ID+"="+it.Triage.State)
		}
		return out
	}
	if got := list("", "maria"); len(got) != 2 || got[0] != other.ID+"=novo" || got[1] != ep.ID+"=encerrado" {
		t.Errorf("list %v", got)
	}
	if got := list("triage=encerrado", "maria"); len(got) != 1 || got[0] != ep.ID+"=encerrado" {
		t.Errorf("encerrado %v", got)
	}
	if _, err := f.db.ActOnTriage(ctx, other.ID, store.Actor{User: "sup"}, store.TriageAct{Act: store.ActAssign, Assignee: "ana"}); err != nil {
		t.Fatal(err)
	}
	if got := list("triage=atribuido&assignee=me", "ana"); len(got) != 1 || got[0] != other.ID+"=atribuido" {
		t.Errorf("assigned to ana %v", got)
	}
	if got := list("triage=atribuido&assignee=me", "bia"); len(got) != 0 {
		t.Errorf("assigned to bia %v", got)
	}
	if code, _, _ := f.do("GET", "/api/v1/episodes?triage=aberto", nil, as["maria"]); code != 400 {
		t.Errorf("triage=aberto: %d, want 400", code)
	}
	if code, _, _ := f.do("GET", "/api/v1/episodes/nada/triage", nil, as["maria"]); code != 404 {
		t.Errorf("triage of a missing episode: %d", code)
	}
	if code, _, _ := f.do("POST", "/api/v1/episodes/nada/ack", nil, as["ana"]); code != 404 {
		t.Errorf("ack of a missing episode: %d", code)
	}

	// Audited: each act taken, by whom, from where, with the state before and after.
	code, b, _ := f.do("GET", "/api/v1/audit?object="+url.QueryEscape("episode:"+ep.ID), nil, as["admin"])
	if code != 200 {
		t.Fatalf("audit: %d %s", code, b)
	}
	var audit struct {
		Items []struct {
			User, Action  string
			RemoteAddr    string `json:"remote_addr"`
			Before, After json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &audit); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(audit.Items) - 1; i >= 0; i-- {
		e := audit.Items[i]
		got = append(got, e.User+":"+e.Action)
		if len(e.After) == 0 || e.RemoteAddr == "" {
			t.Errorf("audit entry %s without the state after or the client address", e.Action)
		}
	}
	if s := strings.Join(got, " "); s != "ana:episode.ack ana:episode.assign bia:episode.comment bia:episode.clear ana:episode.comment" {
		t.Errorf("audit %s", s)
	}
	if !strings.Contains(string(audit.Items[1].After), "já estava parado") {
		t.Errorf("the clear's audit entry lacks its reason: %s", audit.Items[1].After)
	}

	// Reopened, with a reason: back to its assignee.
	if code, _, _ := f.do("POST", base+"/reopen", map[string]string{}, as["sup"]); code != 400 {
		t.Errorf("reopen without a reason: %d, want 400", code)
	}
	if code, b, _ := f.do("POST", base+"/reopen", map[string]string{"reason": "O trem voltou a correr."}, as["sup"]); code != 200 {
		t.Fatalf("reopen: %d %s", code, b)
	}
	if a := f.triage(t, ep.ID, as["maria"]); a.State != "atribuido" || a.Assignee != "bia" || a.ClearedBy != "" || a.History[len(a.History)-1].Act != "reopen" {
		t.Errorf("reopened: %+v", a)
	}
	if code, _, _ := f.do("POST", base+"/reopen", map[string]string{"reason": "de novo"}, as["sup"]); code != 409 {
		t.Errorf("reopen of an open alert: %d, want 409", code)
	}
}

// TestCommentsAppendOnly: no route changes or deletes a comment (the store refuses it too:
// store.TestTriageHistoryAppendOnly).
func TestCommentsAppendOnly(t *testing.T) {
	f, as := newTriageFixture(t)
	ep := testEpisode("PIU-001", "speed", t0, true)
	if err := f.db.UpsertEpisode(context.Background(), ep, nil); err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/episodes/" + url.PathEscape(ep.ID)
	if code, b, _ := f.do("POST", base+"/comments", map[string]string{"text": "primeiro"}, as["admin"]); code != 200 {
		t.Fatalf("comment: %d %s", code, b)
	}
	id := f.triage(t, ep.ID, as["admin"]).History
	if len(id) != 1 {
		t.Fatal(id)
	}
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		if code, _, _ := f.do(m, base+"/comments", map[string]string{"text": "mudado"}, as["admin"]); code != http.StatusMethodNotAllowed {
			t.Errorf("%s comments: %d, want 405", m, code)
		}
		for _, p := range []string{"/comments/1", "/triage/1", "/history/1"} {
			if code, _, _ := f.do(m, base+p, map[string]string{"text": "mudado"}, as["admin"]); code != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", m, p, code)
			}
		}
	}
	if code, _, _ := f.do("DELETE", base+"/triage", nil, as["admin"]); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE triage: %d, want 405", code)
	}
	if h := f.triage(t, ep.ID, as["admin"]).History; len(h) != 1 || h[0].Text != "primeiro" {
		t.Errorf("history after the attempts: %+v", h)
	}
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestEscalationThroughTheAPI: with a fake clock, an alert nobody acknowledged reaches the
// supervisor's Telegram (the local Bot API server: the real one is unreachable here) once, N
// minutes after it started; the ones acknowledged or cleared through the API before do not;
// the escalation shows in the triage history and in the audit log, and stops nothing else.
func TestEscalationThroughTheAPI(t *testing.T) {
	f, as := newTriageFixture(t)
	ctx := context.Background()
	bot := telegramtest.Start(t)
	clock := &testClock{t: time.Now().Truncate(time.Second)}
	d, err := notify.New(notify.Config{
		Channels: map[string]notify.Channel{"telegram": &telegram.Client{BaseURL: bot.URL, Token: bot.Token}},
		Users: []notify.User{
			{ID: "sup", Addresses: []notify.Address{{Channel: "telegram", To: "2001"}}, Prefs: notify.Preferences{OnDutyOnly: true}},
			{ID: "ana", Addresses: []notify.Address{{Channel: "telegram", To: "1001"}}},
		},
		Composer: notify.Composer{BaseURL: "https://monitor.piuma.example"}, Clock: clock,
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	esc := &notify.Escalator{Policy: notify.Escalation{MinSeverity: notify.High, After: 10 * time.Minute, To: []string{"sup"}},
		Store: f.db, Dispatcher: d, Clock: clock, Logger: slog.New(slog.DiscardHandler)}

	start := clock.Now()
	lone := testEpisode("PIU-001", "speed", start, true)
	acked := testEpisode("PIU-002", "speed", start, true)
	cleared := testEpisode("PIU-003", "speed", start, true)
	if err := f.db.UpsertEpisode(ctx, lone, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.db.UpsertEpisode(ctx, acked, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.db.UpsertEpisode(ctx, cleared, nil); err != nil {
		t.Fatal(err)
	}

	clock.Advance(5 * time.Minute)
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+url.PathEscape(acked.ID)+"/ack", nil, as["ana"]); code != 200 {
		t.Fatalf("ack: %d %s", code, b)
	}
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+url.PathEscape(cleared.ID)+"/clear", map[string]string{"reason": "Alerta duplicado."}, as["ana"]); code != 200 {
		t.Fatalf("clear: %d %s", code, b)
	}
	clock.Advance(4*time.Minute + 59*time.Second)
	if n, err := esc.Check(ctx); err != nil || n != 0 {
		t.Fatalf("escalated before N minutes: %d %v", n, err)
	}
	clock.Advance(time.Second)
	if n, err := esc.Check(ctx); err != nil || n != 1 {
		t.Fatalf("at N minutes: escalated %d %v, want 1", n, err)
	}
	d.Flush(ctx)
	reqs := bot.Requests()
	var texts []string
	for _, r := range reqs {
		if string(r.ChatID) != "2001" {
			t.Errorf("escalation to chat %s, want the supervisor's 2001", r.ChatID)
		}
		if r.Method == "sendMessage" {
			texts = append(texts, r.Text)
		}
	}
	if len(texts) != 1 || !strings.Contains(texts[0], "Sem reconhecimento há 10 min") || !strings.Contains(texts[0], "PIU-001") {
		t.Fatalf("Bot API messages %q (%d requests)", texts, len(reqs))
	}

	a := f.triage(t, lone.ID, as["maria"])
	if a.State != "novo" || a.EscalatedAt == "" || len(a.History) != 1 || a.History[0].Act != "escalate" || a.History[0].Text != "sup" {
		t.Errorf("escalated triage %+v", a)
	}
	// Later checks send nothing more; acknowledging the escalated alert still works.
	clock.Advance(time.Hour)
	if n, err := esc.Check(ctx); err != nil || n != 0 {
		t.Errorf("second escalation: %d %v", n, err)
	}
	d.Flush(ctx)
	if n := len(bot.Requests()); n != len(reqs) {
		t.Errorf("%d Bot API requests after an hour, want %d", n, len(reqs))
	}
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+url.PathEscape(lone.ID)+"/ack", nil, as["sup"]); code != 200 {
		t.Fatalf("ack after the escalation: %d %s", code, b)
	}
	code, b, _ := f.do("GET", "/api/v1/audit?action=episode.escalate", nil, as["admin"])
	var audit struct {
		Items []struct{ User, Object string }
	}
	if err := json.Unmarshal(b, &audit); code != 200 || err != nil || len(audit.Items) != 1 || audit.Items[0].Object != "episode:"+lone.ID || audit.Items[0].User != "" {
		t.Errorf("escalation audit: %d %s", code, b)
	}
}

// TestTriageOnTheStream: an act reaches the other dashboards as a triage event with the act.
func TestTriageOnTheStream(t *testing.T) {
	f, as := newTriageFixture(t)
	ep := testEpisode("PIU-001", "speed", t0, true)
	if err := f.db.UpsertEpisode(context.Background(), ep, nil); err != nil {
		t.Fatal(err)
	}
	resp := f.openStream(as["maria"])
	defer resp.Body.Close()
	sr := &sseReader{r: bufio.NewReader(resp.Body)}
	sr.waitConnected(t)
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+url.PathEscape(ep.ID)+"/comments", map[string]string{"text": "Ciente."}, as["ana"]); code != 200 {
		t.Fatalf("comment: %d %s", code, b)
	}
	for {
		ev, err := sr.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.name != api.EventTriage {
			continue
		}
		var got triageAnswer
		if err := json.Unmarshal([]byte(ev.data), &got); err != nil {
			t.Fatal(err)
		}
		if got.State != "novo" || len(got.History) != 1 || got.History[0].Act != "comment" || got.History[0].User != "ana" || got.History[0].Text != "Ciente." {
			t.Errorf("triage event %s", ev.data)
		}
		return
	}
}
