package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// GET /api/v1/vehicles/activity answers each vehicle's local days with readings, from the
// batch log, to any signed-in user; bad ranges are 400.
func TestVehicleActivity(t *testing.T) {
	f := newFixture(t, func(c *api.Config) { c.Map.Profile = profile.Piuma() })
	utc := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	if err := f.db.Commit(context.Background(), &rules.Changes{}, []store.Batch{
		{Vehicle: "PIU-001", Epoch: "e", Seq: 1, ReceivedAt: utc(29, 2), TMin: utc(29, 2), TMax: utc(29, 2), Payload: []byte(`{}`)}, // 28/11 23:00 local
	}); err != nil {
		t.Fatal(err)
	}
	_, viewer := f.login("maria", viewerPassword)
	if code, _, _ := f.do("GET", "/api/v1/vehicles/activity?from=2026-11-23T03:00:00Z&to=2026-11-30T02:59:59Z", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("without a session: %d", code)
	}
	code, body, _ := f.do("GET", "/api/v1/vehicles/activity?from=2026-11-23T03:00:00Z&to=2026-11-30T02:59:59Z", nil, session{bearer: viewer})
	var got struct {
		Items []struct {
			Vehicle string   `json:"vehicle"`
			Days    []string `json:"days"`
		} `json:"items"`
		LoggedSince string `json:"logged_since"`
		TimeZone    string `json:"time_zone"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &got) != nil || len(got.Items) != 1 || got.Items[0].Vehicle != "PIU-001" ||
		len(got.Items[0].Days) != 1 || got.Items[0].Days[0] != "2026-11-28" || got.TimeZone != "America/Sao_Paulo" || got.LoggedSince == "" {
		t.Errorf("activity: %d %s", code, body)
	}
	for _, q := range []string{"", "?from=2026-11-23T03:00:00Z", "?from=2026-11-30T00:00:00Z&to=2026-11-23T00:00:00Z",
		"?from=2026-01-01T00:00:00Z&to=2026-11-23T00:00:00Z", "?from=ontem&to=hoje"} {
		if code, body, _ := f.do("GET", "/api/v1/vehicles/activity"+q, nil, session{bearer: viewer}); code != http.StatusBadRequest {
			t.Errorf("%q: %d %s", q, code, body)
		}
	}
}
