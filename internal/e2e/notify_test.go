package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram/telegramtest"
)

// TestSpeedEpisodeNotified: simulator → pty → bridge → Mosquitto → monitor → notifications. A
// speeding episode reaches, for the user whose preferences match, a real SMTP server's mailbox
// (STARTTLS, AUTH PLAIN) and the local Bot API server (the real Telegram API is unreachable
// here); not the user whose quiet hours cover the moment, nor the one who follows other rules.
func TestSpeedEpisodeNotified(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	smtpd := emailtest.Start(t, emailtest.Options{})
	bot := telegramtest.Start(t)

	dir := t.TempDir()
	ca := filepath.Join(dir, "smtp-ca.pem")
	if err := os.WriteFile(ca, smtpd.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// Bruno's quiet hours cover now (the dispatcher uses the wall clock, in Piúma's time).
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	h := time.Now().In(loc).Hour()
	quiet := fmt.Sprintf("%02d:00-%02d:00", (h+23)%24, (h+2)%24)
	file := filepath.Join(dir, "notifications.yaml")
	conf := fmt.Sprintf(`base_url: https://monitor.piuma.example
email: {addr: "%s", username: %s, from: "Monitor do trenzinho <monitor@piuma.example>", ca_file: %s}
telegram: {base_url: "%s"}
users:
  - {id: ana, email: ana@piuma.example, telegram: "1001", rules: [speed], vehicles: [FAST-001]}
  - {id: carla, email: carla@piuma.example, telegram: "1003", rules: [noise_limit]}
  - {id: bruno, email: bruno@piuma.example, telegram: "1002", rules: [speed], quiet_hours: "%s"}
`, smtpd.Addr, smtpd.Username, ca, bot.URL, quiet)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}

	m := &runningMonitor{Monitor: testenv.StartMonitor(t, bin, broker.URL(), filepath.Join(dir, "monitor.db"),
		"TRENZINHO_NOTIFICATIONS="+file,
		"TRENZINHO_SMTP_PASSWORD="+smtpd.Password,
		"TRENZINHO_TELEGRAM_TOKEN="+bot.Token,
	)}
	m.login(t)

	// Friday noon in Piúma: in service hours, so only the speed rule can fire.
	start := "2026-11-27T15:00:00Z"
	fast := startSimulation(t, bin, "--vehicles=1", "--prefix=FAST", "--scenario=20:15,45:30,20:30", "--duration=75s", "--speed-up=3", "--start="+start)
	startBridge(t, bin, broker.URL(), "FAST-001", fast.devices["FAST-001"], serviceInput(t, fast.devices["FAST-001"])...)

	box := smtpd.Wait(1, 3*time.Minute)
	if len(box) == 0 {
		t.Fatal("no e-mail within 3 minutes")
	}
	eps := m.client.episodes(t, "vehicle=FAST-001&rule=speed")
	if len(eps) != 1 {
		t.Fatalf("%d speed episodes", len(eps))
	}
	// The dispatcher routes an alert to the users in their order, Bruno (in his quiet hours)
	// last: once it counted him withheld, whatever it queued for this episode is counted
	// queued; once each message queued is sent, retried or failed, nothing else is on its way.
	metrics := m.URL + "/metrics"
	testenv.WaitFor(t, "Bruno's alert withheld", time.Minute, func() bool {
		return testenv.Scrape(t, metrics)["trenzinho_notify_quiet_hours_total"] == 1
	})
	var counts map[string]float64
	testenv.WaitFor(t, "every message queued sent, retried or failed", time.Minute, func() bool {
		counts = testenv.Scrape(t, metrics)
		for _, c := range []string{"email", "telegram"} {
			l := `{channel="` + c + `"}`
			if counts["trenzinho_notify_queued_total"+l] != counts["trenzinho_notify_sent_total"+l]+
				counts["trenzinho_notify_retried_total"+l]+counts["trenzinho_notify_failed_total"+l] {
				return false
			}
		}
		return true
	})
	if e, tg := counts[`trenzinho_notify_queued_total{channel="email"}`], counts[`trenzinho_notify_queued_total{channel="telegram"}`]; e != 1 || tg != 1 {
		t.Errorf("%v e-mails and %v Telegram messages queued, want one each (Ana's)", e, tg)
	}
	box = smtpd.Mailbox()
	if len(box) != 1 || box[0].To[0] != "ana@piuma.example" || !box[0].TLS {
		t.Fatalf("mailbox: %+v", box)
	}
	subject, text, _ := box[0].Read(t)
	if want := "[Trenzinho] Excesso de velocidade — FAST-001 às 12:00"; subject != want {
		t.Errorf("subject %q, want %q", subject, want)
	}
	for _, want := range []string{
		"Alerta: Excesso de velocidade\n", "Veículo: FAST-001\n", "Medido: 45,0 km/h",
		"Início: 27/11/2026 12:00:15 (horário de Brasília)\n",
		"Ver o episódio: https://monitor.piuma.example/#/episodio/" + url.PathEscape(eps[0].ID) + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the e-mail lacks %q:\n%s", want, text)
		}
	}
	reqs := bot.Requests()
	if len(reqs) != 2 || reqs[0].Method != "sendMessage" || reqs[1].Method != "sendLocation" {
		t.Fatalf("Bot API requests: %+v", reqs)
	}
	for _, r := range reqs {
		if string(r.ChatID) != "1001" {
			t.Errorf("Telegram to %s, want Ana's 1001", r.ChatID)
		}
	}
}
