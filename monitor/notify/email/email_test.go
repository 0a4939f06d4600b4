package email_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/email"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
)

func message() notify.Message {
	return notify.Message{
		Subject: "[Trenzinho] Excesso de velocidade — TR-01 às 14:32",
		Text:    "Alerta: Excesso de velocidade\nVeículo: TR-01\nVer o episódio: https://monitor.example/#/episodio/e1\n",
		HTML:    "<p><strong>Alerta: Excesso de velocidade</strong></p>\n<p><a href=\"https://monitor.example/#/episodio/e1\">Ver</a></p>\n",
	}
}

func sender(t *testing.T, srv *emailtest.Server, sec email.Security, password string) *email.Sender {
	t.Helper()
	s, err := email.New(email.Config{
		Addr: srv.Addr, Security: sec, Username: srv.Username, Password: password,
		From: "Monitor do trenzinho <monitor@piuma.example>", TLS: &tls.Config{RootCAs: srv.Roots},
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parsed is a received message read back the way a mail client reads it.
type parsed struct {
	subject, to, from string
	parts             map[string]string // content type → decoded body
}

func parse(t *testing.T, data []byte) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, data)
	}
	var dec mime.WordDecoder
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("content type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	p := parsed{subject: subject, to: msg.Header.Get("To"), from: msg.Header.Get("From"), parts: map[string]string{}}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(part)
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		p.parts[ct] = strings.ReplaceAll(string(b), "\r\n", "\n")
	}
	return p
}

func TestSendStartTLS(t *testing.T) {
	srv := emailtest.Start(t, emailtest.Options{})
	s := sender(t, srv, email.StartTLS, srv.Password)
	m := message()
	if err := s.Send(context.Background(), "Fiscal Ana <ana@piuma.example>", m); err != nil {
		t.Fatal(err)
	}
	box := srv.Mailbox()
	if len(box) != 1 {
		t.Fatalf("%d messages", len(box))
	}
	got := box[0]
	if !got.TLS || got.User != srv.Username || got.From != "monitor@piuma.example" || len(got.To) != 1 || got.To[0] != "ana@piuma.example" {
		t.Errorf("envelope %+v", got)
	}
	p := parse(t, got.Data)
	if p.subject != m.Subject {
		t.Errorf("subject %q, want %q", p.subject, m.Subject)
	}
	if p.parts["text/plain"] != m.Text || p.parts["text/html"] != m.HTML {
		t.Errorf("parts %q", p.parts)
	}
	if !strings.Contains(p.to, "ana@piuma.example") || !strings.Contains(p.from, "monitor@piuma.example") {
		t.Errorf("headers To %q From %q", p.to, p.from)
	}
}

func TestSendImplicitTLS(t *testing.T) {
	srv := emailtest.Start(t, emailtest.Options{ImplicitTLS: true})
	s := sender(t, srv, email.ImplicitTLS, srv.Password)
	if err := s.Send(context.Background(), "ana@piuma.example", message()); err != nil {
		t.Fatal(err)
	}
	if box := srv.Mailbox(); len(box) != 1 || !box[0].TLS {
		t.Fatalf("mailbox %+v", box)
	}
}

func TestSendFailures(t *testing.T) {
	ctx := context.Background()
	srv := emailtest.Start(t, emailtest.Options{})
	good := sender(t, srv, email.StartTLS, srv.Password)

	// A server without STARTTLS is refused: the password never goes in the clear.
	plain := emailtest.Start(t, emailtest.Options{NoTLS: true})
	// An untrusted certificate (no roots given: the system's do not know the test's).
	untrusted, err := email.New(email.Config{Addr: srv.Addr, From: "m@piuma.example", Username: "monitor", Password: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// A closed port.
	closed, err := email.New(email.Config{Addr: "127.0.0.1:1", From: "m@piuma.example"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		send      func() error
		transient bool
	}{
		{"no STARTTLS", func() error {
			return sender(t, plain, email.StartTLS, plain.Password).Send(ctx, "a@b.example", message())
		}, false},
		{"wrong password", func() error { return sender(t, srv, email.StartTLS, "errada").Send(ctx, "a@b.example", message()) }, false},
		{"untrusted certificate", func() error { return untrusted.Send(ctx, "a@b.example", message()) }, false},
		{"bad address", func() error { return good.Send(ctx, "not an address", message()) }, false},
		{"451 try later", func() error { srv.FailNext(451); return good.Send(ctx, "a@b.example", message()) }, true},
		{"550 no such user", func() error { srv.FailNext(550); return good.Send(ctx, "a@b.example", message()) }, false},
		{"connection refused", func() error { return closed.Send(ctx, "a@b.example", message()) }, true},
	}
	for _, c := range cases {
		err := c.send()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if tr, _ := notify.Classify(err); tr != c.transient {
			t.Errorf("%s: transient %v, want %v (%v)", c.name, tr, c.transient, err)
		}
	}
	if n := len(srv.Mailbox()) + len(plain.Mailbox()); n != 0 {
		t.Errorf("%d messages delivered by failing sends", n)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []email.Config{
		{Addr: "no-port", From: "m@piuma.example"},
		{Addr: "h:25", From: "not an address"},
		{Addr: "h:25", From: "m@piuma.example", Security: "ssl3"},
	} {
		if _, err := email.New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}
