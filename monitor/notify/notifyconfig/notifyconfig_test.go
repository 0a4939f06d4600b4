package notifyconfig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestExampleFile(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "notifications.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Users) != 3 || f.Window != 5*time.Minute || f.Email.Addr != "smtp.piuma.es.gov.br:587" || len(f.Schedule) != 1 {
		t.Fatalf("%+v", f)
	}
	keys, _ := webpush.GenerateKeys()
	secrets := map[string]string{EnvSMTPPassword: "x", EnvTelegramToken: "1:abc", EnvVAPIDKey: keys.PrivateString()}
	d, severity, err := f.Dispatcher(Options{Getenv: env(secrets), Registerer: prometheus.NewRegistry()})
	if err != nil || d == nil {
		t.Fatal(err)
	}
	if severity("parked_public_road") != notify.Medium || severity("speed") != notify.High {
		t.Error("severity overrides")
	}
	if p := f.Policy(); p == nil || p.MinSeverity != notify.High || p.After != 10*time.Minute || len(p.To) != 1 || p.To[0] != "carlos" {
		t.Errorf("escalation policy %+v", p)
	}
	// Each secret missing is an error that names its variable.
	for _, k := range []string{EnvSMTPPassword, EnvTelegramToken, EnvVAPIDKey} {
		s := map[string]string{}
		for kk, v := range secrets {
			if kk != k {
				s[kk] = v
			}
		}
		if _, _, err := f.Dispatcher(Options{Getenv: env(s), Registerer: prometheus.NewRegistry()}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("without %s: %v", k, err)
		}
	}
}

// pushTo is a well-formed subscription (the keys of RFC 8291's example) to endpoint.
func pushTo(endpoint string) string {
	return `{"endpoint":"` + endpoint + `","keys":{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}}`
}

// TestWebPushHosts: a configured list of push services admits its endpoints.
func TestWebPushHosts(t *testing.T) {
	y := "webpush: {subject: 'mailto:a@b.c', hosts: [push.piuma.example]}\nusers: [{id: a, webpush: ['" + pushTo("https://eu.push.piuma.example/x") + "']}]\n"
	if _, err := Parse([]byte(y), "n.yaml"); err != nil {
		t.Fatal(err)
	}
}

func TestRejects(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown field", "emial: {}\n", "emial"},
		{"password in the file", "email: {addr: 'h:587', from: a@b.c, password: x}\n", "password"},
		{"bad severity", "users: [{id: a, min_severity: urgent}]\n", "min_severity"},
		{"bad quiet hours", "users: [{id: a, quiet_hours: noite}]\n", "quiet_hours"},
		{"unknown channel", "users: [{id: a, channels: [sms]}]\n", "sms"},
		{"duplicate user", "users: [{id: a}, {id: a}]\n", "twice"},
		{"address of an unconfigured channel", "users: [{id: a, telegram: '1'}]\n", "does not configure"},
		{"shift of an unknown user", "users: [{id: a}]\nschedule: [{user: b, from: 2026-12-01T18:00:00-03:00, to: 2026-12-02T06:00:00-03:00}]\n", "not in users"},
		{"shift backwards", "users: [{id: a}]\nschedule: [{user: a, from: 2026-12-02T18:00:00-03:00, to: 2026-12-02T06:00:00-03:00}]\n", "not after"},
		{"bad push subscription", "webpush: {subject: 'mailto:a@b.c'}\nusers: [{id: a, webpush: ['{\"endpoint\":\"http://x\"}']}]\n", "webpush[0]"},
		{"bad time zone", "time_zone: Marte/Olympus\n", "time_zone"},
		{"escalation to nobody", "users: [{id: a}]\nescalation: {after: 10m}\n", "escalation.to"},
		{"escalation to an unknown user", "users: [{id: a}]\nescalation: {after: 10m, to: [b]}\n", "not in users"},
		{"escalation at once", "users: [{id: a}]\nescalation: {after: 10s, to: [a]}\n", "escalation.after"},
		{"escalation bad severity", "users: [{id: a}]\nescalation: {after: 10m, to: [a], min_severity: urgente}\n", "escalation.min_severity"},
		{"escalation max_age too short", "users: [{id: a}]\nescalation: {after: 10m, to: [a], max_age: 5m}\n", "escalation.max_age"},
		{"push endpoint not a push service", "webpush: {subject: 'mailto:a@b.c'}\nusers: [{id: a, webpush: ['" + pushTo("https://192.168.0.1/x") + "']}]\n", "not a known push service"},
		{"push endpoint outside the configured hosts", "webpush: {subject: 'mailto:a@b.c', hosts: [push.piuma.example]}\nusers: [{id: a, webpush: ['" + pushTo("https://fcm.googleapis.com/x") + "']}]\n", "not a known push service"},
	} {
		_, err := Parse([]byte(c.yaml), "n.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %q", c.name, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "notifications.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("users: [{id: a, quiet_hours: '22:00-07:00'}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b, "fuzz")
		if err != nil {
			return
		}
		// What parses builds (secrets given), or fails with an error, never a panic.
		keys, _ := webpush.GenerateKeys()
		file.Dispatcher(Options{Getenv: env(map[string]string{EnvSMTPPassword: "x", EnvTelegramToken: "1:a", EnvVAPIDKey: keys.PrivateString()})})
	})
}

// TestFileToMailbox: a dispatcher built from a file (a CA file for the server's certificate)
// delivers to a real SMTP server.
func TestFileToMailbox(t *testing.T) {
	srv := emailtest.Start(t, emailtest.Options{})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]byte(fmt.Sprintf(`
base_url: https://monitor.example
email: {addr: "%s", username: %s, from: "Monitor <m@piuma.example>", ca_file: %s}
users: [{id: ana, email: ana@piuma.example, rules: [speed]}]
`, srv.Addr, srv.Username, ca)), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, severity, err := f.Dispatcher(Options{Getenv: env(map[string]string{EnvSMTPPassword: srv.Password})})
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(notify.Alert{EpisodeID: "e1", Rule: "speed", Vehicle: "PIU-001", Severity: severity("speed"), Start: time.Now()})
	d.Notify(notify.Alert{EpisodeID: "e2", Rule: "hours", Vehicle: "PIU-001", Severity: severity("hours"), Start: time.Now()})
	d.Flush(context.Background())
	if box := srv.Mailbox(); len(box) != 1 || box[0].To[0] != "ana@piuma.example" || !box[0].TLS {
		t.Fatalf("mailbox %+v; dead letters %+v", box, d.DeadLetters())
	}
}
