package telegram_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram/telegramtest"
)

// The real Bot API (api.telegram.org) is unreachable from here: these tests talk to
// telegramtest, a local server that checks each request the way the Bot API documents it.

func message() notify.Message {
	return notify.Message{
		Subject: "[Trenzinho] Excesso de velocidade — TR-01 às 14:32",
		Text:    "Alerta: Excesso de velocidade\nMedido: 32,4 km/h (limite 20,0 km/h) <&>\nVer o episódio: https://monitor.example/#/episodio/e1\n",
		Lat:     -20.84123, Lon: -40.72345, HasPlace: true,
	}
}

func TestSendMessageAndLocation(t *testing.T) {
	api := telegramtest.Start(t)
	c := &telegram.Client{BaseURL: api.URL, Token: api.Token}
	if err := c.Send(context.Background(), "987654321", message()); err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests: %+v", len(reqs), reqs)
	}
	msg, loc := reqs[0], reqs[1]
	if msg.Method != "sendMessage" || string(msg.ChatID) != "987654321" || msg.ParseMode != "HTML" {
		t.Errorf("sendMessage %+v", msg)
	}
	if !strings.HasPrefix(msg.Text, "<b>[Trenzinho] Excesso de velocidade — TR-01 às 14:32</b>\n\n") ||
		!strings.Contains(msg.Text, "(limite 20,0 km/h) &lt;&amp;&gt;") {
		t.Errorf("text %q", msg.Text)
	}
	if loc.Method != "sendLocation" || loc.Latitude != -20.84123 || loc.Longitude != -40.72345 || string(loc.ChatID) != "987654321" {
		t.Errorf("sendLocation %+v", loc)
	}

	// A channel by username; no place, no location.
	m := message()
	m.HasPlace = false
	if err := c.Send(context.Background(), "@fiscalizacao_piuma", m); err != nil {
		t.Fatal(err)
	}
	if reqs := api.Requests(); len(reqs) != 3 || string(reqs[2].ChatID) != `"@fiscalizacao_piuma"` {
		t.Errorf("requests %+v", reqs)
	}
}

func TestLongTextIsCut(t *testing.T) {
	api := telegramtest.Start(t)
	c := &telegram.Client{BaseURL: api.URL, Token: api.Token, NoLocation: true}
	m := message()
	m.Text = strings.Repeat("é", 5000)
	if err := c.Send(context.Background(), "1", m); err != nil {
		t.Fatal(err)
	}
}

func TestErrors(t *testing.T) {
	api := telegramtest.Start(t)
	c := &telegram.Client{BaseURL: api.URL, Token: api.Token, NoLocation: true}
	ctx := context.Background()
	cases := []struct {
		name      string
		fail      telegramtest.Failure
		transient bool
		after     time.Duration
	}{
		{"429 flood control", telegramtest.Failure{Code: 429, RetryAfter: 7}, true, 7 * time.Second},
		{"500", telegramtest.Failure{Code: 500}, true, 0},
		{"502", telegramtest.Failure{Code: 502}, true, 0},
		{"403 blocked", telegramtest.Failure{Code: 403}, false, 0},
		{"400 chat not found", telegramtest.Failure{Code: 400}, false, 0},
	}
	for _, tc := range cases {
		api.FailNext(tc.fail)
		err := c.Send(ctx, "42", message())
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		tr, after := notify.Classify(err)
		if tr != tc.transient || after != tc.after {
			t.Errorf("%s: transient %v after %v; want %v %v (%v)", tc.name, tr, after, tc.transient, tc.after, err)
		}
	}

	// A wrong token is permanent, and no error ever shows a token.
	bad := &telegram.Client{BaseURL: api.URL, Token: "999:wrong-token"}
	err := bad.Send(ctx, "42", message())
	if tr, _ := notify.Classify(err); err == nil || tr {
		t.Errorf("wrong token: %v", err)
	}
	down := &telegram.Client{BaseURL: "http://127.0.0.1:1", Token: api.Token}
	err = down.Send(ctx, "42", message())
	if tr, _ := notify.Classify(err); err == nil || !tr {
		t.Errorf("unreachable API: %v, want transient", err)
	}
	if strings.Contains(err.Error(), api.Token) {
		t.Errorf("error shows the token: %v", err)
	}
	if err := c.Send(ctx, "not a chat", message()); err == nil {
		t.Error("a malformed chat id was sent")
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("%d requests accepted", n)
	}
}
