package api_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/email"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/store"
)

var _ api.DeadLetters = (*notify.Dispatcher)(nil)

// TestDeadLetterRoutes: a message the real SMTP server refuses becomes a dead letter the admin
// lists (a viewer may not); a retry the server refuses again answers 502 and keeps the letter,
// one it accepts delivers to the mailbox and removes it; every list and retry is audited.
func TestDeadLetterRoutes(t *testing.T) {
	ctx := context.Background()
	smtpd := emailtest.Start(t, emailtest.Options{})
	sender, err := email.New(email.Config{Addr: smtpd.Addr, Username: smtpd.Username, Password: smtpd.Password,
		From: "Monitor <monitor@piuma.example>", TLS: &tls.Config{RootCAs: smtpd.Roots}})
	if err != nil {
		t.Fatal(err)
	}
	var d *notify.Dispatcher
	f := newFixture(t, func(c *api.Config) {
		d, err = notify.New(notify.Config{
			Channels: map[string]notify.Channel{"email": sender}, DeadLetterStore: c.Users.(*store.DB),
			Users:    []notify.User{{ID: "ana", Addresses: []notify.Address{{Channel: "email", To: "ana@piuma.example"}}}},
			Composer: notify.Composer{BaseURL: "https://monitor.example"}, Registerer: prometheus.NewRegistry(),
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		c.DeadLetters = d
	})
	smtpd.FailNext(550)
	d.Notify(notify.Alert{EpisodeID: "PIU-001/speed/3", Rule: "speed", Vehicle: "PIU-001", Severity: notify.High,
		Start: time.Now(), Peak: 31, Limit: 20, Unit: "km/h"})
	d.Flush(ctx)

	const list = "/api/v1/notifications/dead-letters"
	_, viewer := f.login("maria", viewerPassword)
	if code, _, _ := f.do("GET", list, nil, session{bearer: viewer}); code != http.StatusForbidden {
		t.Errorf("viewer lists: %d", code)
	}
	if code, _, _ := f.do("GET", list, nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("anonymous lists: %d", code)
	}
	_, admin := f.login("admin", adminPassword)
	code, body, _ := f.do("GET", list, nil, session{bearer: admin})
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Items) != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	item := page.Items[0]
	if item["user"] != "ana" || item["channel"] != "email" || item["to"] != "ana@piuma.example" ||
		!strings.Contains(item["error"].(string), "550") || item["attempts"] != float64(1) {
		t.Errorf("item %v", item)
	}
	if _, leak := item["address"]; leak {
		t.Error("the raw address is shown")
	}
	retry := list + "/" + strconv.FormatInt(int64(item["id"].(float64)), 10) + "/retry"

	if code, _, _ := f.do("POST", retry, nil, session{bearer: viewer}); code != http.StatusForbidden {
		t.Errorf("viewer retries: %d", code)
	}
	smtpd.FailNext(550)
	if code, body, _ := f.do("POST", retry, nil, session{bearer: admin}); code != http.StatusBadGateway || !strings.Contains(errorMessage(t, body), "550") {
		t.Errorf("refused retry: %d %s", code, body)
	}
	code, body, _ = f.do("GET", list, nil, session{bearer: admin})
	if json.Unmarshal(body, &page) != nil || len(page.Items) != 1 || page.Items[0]["retries"] != float64(1) || page.Items[0]["last_retry_at"] == nil {
		t.Fatalf("after a refused retry: %d %s", code, body)
	}
	if code, body, _ := f.do("POST", retry, nil, session{bearer: admin}); code != http.StatusOK {
		t.Fatalf("retry: %d %s", code, body)
	}
	if box := smtpd.Mailbox(); len(box) != 1 || box[0].To[0] != "ana@piuma.example" {
		t.Fatalf("mailbox %+v", box)
	}
	if _, body, _ := f.do("GET", list, nil, session{bearer: admin}); json.Unmarshal(body, &page) != nil || len(page.Items) != 0 {
		t.Errorf("delivered letter still listed: %s", body)
	}
	if code, _, _ := f.do("POST", retry, nil, session{bearer: admin}); code != http.StatusNotFound {
		t.Errorf("retry of a delivered letter: %d", code)
	}
	if code, _, _ := f.do("POST", list+"/abc/retry", nil, session{bearer: admin}); code != http.StatusNotFound {
		t.Errorf("retry of a bad id: %d", code)
	}

	entries, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "notify.dead_letter.retry"}, 10, "")
	if err != nil || len(entries) != 2 || entries[0].User != "admin" || !strings.Contains(string(entries[0].After), `"delivered":true`) ||
		!strings.Contains(string(entries[1].After), `"delivered":false`) {
		t.Errorf("retry audit %+v %v", entries, err)
	}
	if entries, _, _ := f.db.ListAudit(ctx, store.AuditFilter{Action: "notify.dead_letters.list"}, 10, ""); len(entries) != 3 {
		t.Errorf("%d list audits, want 3", len(entries))
	}
}

// deadLetterDispatcher is a dispatcher without channels that stores its dead letters in db,
// for the fixtures that serve every route.
func deadLetterDispatcher(t *testing.T, db *store.DB) *notify.Dispatcher {
	d, err := notify.New(notify.Config{DeadLetterStore: db, Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeadLetterRoutesAbsent: without notifications the routes do not exist.
func TestDeadLetterRoutesAbsent(t *testing.T) {
	f := newFixture(t, nil)
	_, admin := f.login("admin", adminPassword)
	if code, _, _ := f.do("GET", "/api/v1/notifications/dead-letters", nil, session{bearer: admin}); code != http.StatusNotFound {
		t.Errorf("%d", code)
	}
}
