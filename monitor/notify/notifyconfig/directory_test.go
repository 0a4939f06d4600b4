package notifyconfig

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// TestDirectoryCombines: the file's users seed; a user's saved preferences win over the file's
// entry (addresses included, the file's push subscriptions kept); a user only in the database is
// added, a disabled one left out; the schedule is the file's plus the stored shifts; Prefs says
// where a user's preferences come from.
func TestDirectoryCombines(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := Parse([]byte(`
email: {addr: "smtp.example:587", from: "m@piuma.example"}
webpush: {subject: "mailto:f@piuma.example"}
users:
  - {id: ana, email: ana@file.example, rules: [speed], webpush: ['`+pushTo("https://fcm.googleapis.com/fcm/send/x")+`']}
  - {id: bruno, email: bruno@file.example, quiet_hours: "22:00-06:00"}
schedule:
  - {user: bruno, from: 2026-12-05T18:00:00-03:00, to: 2026-12-06T06:00:00-03:00}
`), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ana", "carla", "davi"} {
		if _, err := db.CreateUser(ctx, n, "senha-de-teste-1", store.RoleFiscal); err != nil {
			t.Fatal(err)
		}
	}
	dir := NewDirectory(DirectoryConfig{File: f, Store: db})
	if _, src, _ := dir.Prefs(ctx, "ana"); src != SourceFile {
		t.Errorf("ana before saving: %s", src)
	}
	if _, src, _ := dir.Prefs(ctx, "carla"); src != SourceNone {
		t.Errorf("carla before saving: %s", src)
	}
	for _, p := range []store.NotifyPrefs{
		{User: "ana", Telegram: "1001", MinSeverity: "high", QuietHours: "23:00-07:00"},
		{User: "carla", Email: "carla@db.example", Vehicles: []string{"PIU-001"}},
		{User: "davi", Email: "davi@db.example"},
	} {
		if err := db.SetNotifyPrefs(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetDisabled(ctx, "davi", true); err != nil {
		t.Fatal(err)
	}
	if p, src, _ := dir.Prefs(ctx, "ana"); src != SourceSaved || p.Email != "" || p.Telegram != "1001" {
		t.Errorf("ana after saving: %s %+v", src, p)
	}
	from := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	if _, err := db.AddNotifyShift(ctx, store.NotifyShift{User: "carla", From: from, To: from.Add(12 * time.Hour), CreatedBy: "chefe"}); err != nil {
		t.Fatal(err)
	}
	saved, _ := db.AllNotifyPrefs(ctx)
	stored, _ := db.NotifyShifts(ctx, time.Time{}, time.Time{})
	users, sched := dir.merge(saved, stored, nil)

	byID := map[string]notify.User{}
	for _, u := range users {
		byID[u.ID] = u
	}
	if len(users) != 3 || byID["davi"].ID != "" {
		t.Fatalf("users %+v", users)
	}
	chans := func(u notify.User) (out []string) {
		for _, a := range u.Addresses {
			out = append(out, a.Channel+":"+a.To[:min(len(a.To), 12)])
		}
		return out
	}
	if got := chans(byID["ana"]); !slices.Equal(got, []string{"telegram:1001", `webpush:{"endpoint":`}) ||
		byID["ana"].Prefs.MinSeverity != notify.High || byID["ana"].Prefs.Quiet == nil || len(byID["ana"].Prefs.Rules) != 0 {
		t.Errorf("ana: saved preferences do not win: %+v %v", byID["ana"].Prefs, got)
	}
	if got := chans(byID["bruno"]); !slices.Equal(got, []string{"email:bruno@file.e"}) || byID["bruno"].Prefs.Quiet == nil {
		t.Errorf("bruno (file only): %+v %v", byID["bruno"], got)
	}
	if got := chans(byID["carla"]); !slices.Equal(got, []string{"email:carla@db.exa"}) || !slices.Equal(byID["carla"].Prefs.Vehicles, []string{"PIU-001"}) {
		t.Errorf("carla (database only): %+v", byID["carla"])
	}
	if len(sched) != 2 || !slices.Equal(sched.OnDuty(from.Add(time.Hour)), []string{"carla"}) ||
		!slices.Equal(sched.OnDuty(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)), []string{"bruno"}) {
		t.Errorf("schedule %+v", sched)
	}
	shifts, err := dir.Shifts(ctx, time.Time{}, time.Time{})
	if err != nil || len(shifts) != 2 || shifts[0].ID != 0 || shifts[0].User != "bruno" || shifts[1].ID == 0 {
		t.Errorf("listed shifts %+v %v", shifts, err)
	}
}
