package notify_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/email"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram/telegramtest"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// channels starts a real SMTP server (STARTTLS, AUTH PLAIN) and the local Bot API server (the
// real Telegram API is unreachable here) and returns the channels that speak to them.
func channels(t *testing.T) (*emailtest.Server, *telegramtest.Server, map[string]notify.Channel) {
	smtpd := emailtest.Start(t, emailtest.Options{})
	sender, err := email.New(email.Config{Addr: smtpd.Addr, Username: smtpd.Username, Password: smtpd.Password,
		From: "Monitor do trenzinho <monitor@piuma.example>", TLS: &tls.Config{RootCAs: smtpd.Roots}})
	if err != nil {
		t.Fatal(err)
	}
	bot := telegramtest.Start(t)
	return smtpd, bot, map[string]notify.Channel{
		"email":    sender,
		"telegram": &telegram.Client{BaseURL: bot.URL, Token: bot.Token},
	}
}

func user(id, chat string, p notify.Preferences) notify.User {
	return notify.User{ID: id, Prefs: p, Addresses: []notify.Address{{Channel: "email", To: id + "@piuma.example"}, {Channel: "telegram", To: chat}}}
}

// speedingEpisode drives the rules engine with the Piúma profile through a trip at 45 km/h for
// 30 s and returns the speed episode as it was when it opened.
func speedingEpisode(t *testing.T, start time.Time) rules.Episode {
	e := rules.New(profile.Piuma(), nil)
	var seq uint64
	speeds := slices.Concat(fleettest.Repeat(20, 10), fleettest.Repeat(45, 30), fleettest.Repeat(20, 20))
	trip := fleettest.Trip{Vehicle: "PIU-001", Start: start, Seconds: fleettest.Drive(-20.8367, -40.7292, speeds...)}
	for _, b := range trip.Batches(t, &seq) {
		e.Tick(b.Received)
		e.Apply(b.Batch, b.Received)
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range c.Episodes {
			if ep.Rule == "speed" {
				return ep
			}
		}
	}
	t.Fatal("the engine opened no speed episode")
	return rules.Episode{}
}

// TestSpeedingReachesTheMailbox: a speeding episode from the rules engine reaches, for the
// user whose preferences match, a real SMTP server's mailbox and the Bot API; not the user in
// quiet hours, nor the one who follows other rules.
func TestSpeedingReachesTheMailbox(t *testing.T) {
	smtpd, bot, chans := channels(t)
	// 14:00 in Piúma.
	start := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	ep := speedingEpisode(t, start)

	siesta, _ := notify.ParseQuietHours("13:00-15:00")
	users := []notify.User{
		user("ana", "1001", notify.Preferences{Rules: []string{"speed"}, Vehicles: []string{"PIU-001"}}),
		user("bruno", "1002", notify.Preferences{Quiet: &siesta}),
		user("carla", "1003", notify.Preferences{Rules: []string{"noise_limit"}}),
	}
	clk := &clock{t: ep.Start.Add(12 * time.Second)} // the episode is confirmed after 10 s
	d, err := notify.New(notify.Config{Channels: chans, Users: users, Clock: clk,
		Composer: notify.Composer{BaseURL: "https://monitor.piuma.example"}, Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(notify.FromEpisode(&ep, "", 0))
	d.Flush(context.Background())

	box := smtpd.Mailbox()
	if len(box) != 1 || len(box[0].To) != 1 || box[0].To[0] != "ana@piuma.example" {
		t.Fatalf("mailbox %+v", box)
	}
	subject, text, html := box[0].Read(t)
	if want := "[Trenzinho] Excesso de velocidade — PIU-001 às 14:00"; subject != want {
		t.Errorf("subject %q, want %q", subject, want)
	}
	link := "https://monitor.piuma.example/#/episodio/" + strings.ReplaceAll(ep.ID, "/", "%2F")
	for _, want := range []string{
		"Alerta: Excesso de velocidade\n", "Veículo: PIU-001\n",
		fmt.Sprintf("Medido: 45,0 km/h (limite %s km/h)\n", strings.Replace(fmt.Sprintf("%.1f", ep.Limit), ".", ",", 1)),
		"Início: 01/12/2026 14:00:10 (horário de Brasília)\n",
		"Ver o episódio: " + link + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(html, `<a href="`+link+`">`) {
		t.Errorf("HTML lacks the link:\n%s", html)
	}

	reqs := bot.Requests()
	if len(reqs) != 2 || reqs[0].Method != "sendMessage" || reqs[1].Method != "sendLocation" {
		t.Fatalf("Bot API requests %+v", reqs)
	}
	for _, r := range reqs {
		if string(r.ChatID) != "1001" {
			t.Errorf("Telegram to chat %s, want Ana's 1001", r.ChatID)
		}
	}
	if !strings.Contains(reqs[0].Text, "Excesso de velocidade") || !strings.Contains(reqs[0].Text, link) {
		t.Errorf("Telegram text %q", reqs[0].Text)
	}
}

// TestBurstOverRealChannels: 20 alerts in 10 s give at most 2 messages per user per channel,
// counted in the real SMTP server's mailbox and at the Bot API server.
func TestBurstOverRealChannels(t *testing.T) {
	smtpd, bot, chans := channels(t)
	users := []notify.User{user("ana", "1001", notify.Preferences{}), user("bruno", "1002", notify.Preferences{})}
	t0 := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	d, err := notify.New(notify.Config{Channels: chans, Users: users, Clock: clk, Window: time.Minute,
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 20 {
		at := t0.Add(time.Duration(i) * 500 * time.Millisecond)
		clk.Set(at)
		d.Notify(notify.Alert{EpisodeID: fmt.Sprintf("PIU-00%d/speed/%d", i%3, i), Rule: "speed", Vehicle: fmt.Sprintf("PIU-00%d", i%3),
			Severity: notify.High, Start: at, Peak: 40, Limit: 20, Unit: "km/h", Lat: -20.84, Lon: -40.72})
		d.Flush(ctx)
	}
	clk.Set(t0.Add(2 * time.Minute))
	d.Flush(ctx)

	perUser := map[string]int{}
	for _, m := range smtpd.Mailbox() {
		perUser[m.To[0]]++
	}
	texts := map[string]int{}
	for _, r := range bot.Requests() {
		if r.Method == "sendMessage" {
			perUser[string(r.ChatID)]++
			// The group covers alerts 2-20: the first named, "e mais 18".
			if strings.Contains(r.Text, "e mais 18 alertas") {
				texts[string(r.ChatID)]++
			}
		}
	}
	for _, who := range []string{"ana@piuma.example", "bruno@piuma.example", "1001", "1002"} {
		if perUser[who] != 2 {
			t.Errorf("%s got %d messages, want 2 (the first, then the group)", who, perUser[who])
		}
	}
	if texts["1001"] != 1 || texts["1002"] != 1 {
		t.Errorf("grouped messages %v", texts)
	}
}
