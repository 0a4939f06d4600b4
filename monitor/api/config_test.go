package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
)

// GET /api/v1/config tells the dashboard whether the registry and the case routes are there, so
// that it never probes a route that answers 404 (a console error in the browser), and gives the
// manual infractions and the suspension range of the profile when cases are served.
func TestConfigSaysWhatIsServed(t *testing.T) {
	type manual struct {
		ID, Article, Penalty, Text string
		Fine                       float64
	}
	type config struct {
		Registry          *bool
		Cases             *bool
		ManualInfractions []manual `json:"manual_infractions"`
		Suspension        *struct {
			MinDays int `json:"min_days"`
			MaxDays int `json:"max_days"`
		}
	}
	get := func(f interface {
		do(string, string, any, session, ...string) (int, []byte, http.Header)
	}, tok session) config {
		t.Helper()
		code, body, _ := f.do("GET", "/api/v1/config", nil, tok)
		if code != http.StatusOK {
			t.Fatalf("config: %d %s", code, body)
		}
		var c config
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}

	plain := newFixture(t, nil)
	_, tok := plain.login("maria", viewerPassword)
	c := get(plain, session{bearer: tok})
	if c.Registry == nil || *c.Registry || c.Cases == nil || *c.Cases || c.ManualInfractions != nil || c.Suspension != nil {
		t.Errorf("without registry and cases: %+v", c)
	}

	reg := newRegFixture(t, nil)
	if c := get(reg.fixture, reg.viewer); c.Registry == nil || !*c.Registry {
		t.Errorf("with a registry: registry = %v", c.Registry)
	}

	cf := newCaseFixture(t)
	c = get(cf.fixture, session{bearer: cf.viewer})
	if c.Cases == nil || !*c.Cases || c.Suspension == nil || c.Suspension.MinDays != 10 || c.Suspension.MaxDays != 45 {
		t.Errorf("with cases: %+v", c)
	}
	found := false
	for _, m := range c.ManualInfractions {
		if m.ID == "art16" && m.Article == "Art. 16" && m.Penalty == "Art. 46, XII" && m.Fine == 400 && m.Text != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("manual infractions %+v lack art16", c.ManualInfractions)
	}
}

// GET /api/v1/config says how long a draft waits for an agent's verification
// (TRENZINHO_DRAFT_VERIFICATION_WAIT), so that the dashboard can say when the draft comes.
func TestConfigSaysTheVerificationWait(t *testing.T) {
	f := newFixture(t, func(c *api.Config) { c.VerificationWait = 150 * time.Second })
	_, tok := f.login("maria", viewerPassword)
	code, body, _ := f.do("GET", "/api/v1/config", nil, session{bearer: tok})
	var c struct {
		VerificationWaitS *float64 `json:"verification_wait_s"`
	}
	if err := json.Unmarshal(body, &c); code != http.StatusOK || err != nil {
		t.Fatalf("config: %d %s (%v)", code, body, err)
	}
	if c.VerificationWaitS == nil || *c.VerificationWaitS != 150 {
		t.Errorf("verification_wait_s = %v, want 150 (%s)", c.VerificationWaitS, body)
	}
}

// GET /api/v1/config says how long after its episode's last change a draft is made
// (TRENZINHO_DRAFT_SETTLE), so that the Revisão page can say why a closed episode has no draft
// yet; a monitor that does not say it omits the field.
func TestConfigSaysDraftSettle(t *testing.T) {
	get := func(f *fixture) map[string]any {
		t.Helper()
		_, tok := f.login("maria", viewerPassword)
		code, body, _ := f.do("GET", "/api/v1/config", nil, session{bearer: tok})
		if code != http.StatusOK {
			t.Fatalf("config: %d %s", code, body)
		}
		var c map[string]any
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := get(newFixture(t, func(c *api.Config) { c.DraftSettle = 150 * time.Second }))
	if v, ok := c["draft_settle_s"].(float64); !ok || v != 150 {
		t.Errorf("draft_settle_s = %v, want 150", c["draft_settle_s"])
	}
	if v, ok := get(newFixture(t, nil))["draft_settle_s"]; ok {
		t.Errorf("draft_settle_s = %v without a drafter", v)
	}
}
