package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/profile"
)

// GET /api/v1/profile: admins see the profile in force and each warning with what it blocks and
// the keys that fix it; no one else sees it.
func TestLegalProfile(t *testing.T) {
	f := newFixture(t, func(c *api.Config) { c.Map = api.MapConfig{Profile: profile.Piuma()} })
	_, viewer := f.login("maria", viewerPassword)
	_, admin := f.login("admin", adminPassword)
	var got struct {
		ID, Version   string
		Demonstration bool
		FiscalUnit    struct{ Confirmed bool } `json:"fiscal_unit"`
		Warnings      []struct {
			Text, Blocks string
			BlocksIssue  bool `json:"blocks_issue"`
			Keys         []string
		}
	}
	code, body, _ := f.do("GET", "/api/v1/profile", nil, session{bearer: admin})
	if code != http.StatusOK || json.Unmarshal(body, &got) != nil {
		t.Fatalf("admin: %d %s", code, body)
	}
	p := profile.Piuma()
	if got.ID != p.ID || got.Version != p.Version || got.Demonstration || got.FiscalUnit.Confirmed {
		t.Errorf("profile %+v", got)
	}
	if len(got.Warnings) != len(p.Warnings()) || len(got.Warnings) < 3 {
		t.Fatalf("warnings %+v, want %d", got.Warnings, len(p.Warnings()))
	}
	issue := 0
	for _, w := range got.Warnings {
		if w.Blocks == "" || len(w.Keys) == 0 {
			t.Errorf("warning %q: blocks %q, keys %v", w.Text, w.Blocks, w.Keys)
		}
		if w.BlocksIssue {
			issue++
			if keys := strings.Join(w.Keys, " "); !strings.Contains(keys, "fiscal_unit.confirmed_by") && !strings.Contains(keys, "competence.telemetry_act") {
				t.Errorf("the issue blocked by %q, fixed by %v", w.Text, w.Keys)
			}
		}
	}
	if issue != 2 {
		t.Errorf("%d warnings block the issue, want 2 (the UFMP, the acts of competence)", issue)
	}
	if code, _, _ := f.do("GET", "/api/v1/profile", nil, session{bearer: viewer}); code != http.StatusForbidden {
		t.Errorf("viewer: %d", code)
	}
}
