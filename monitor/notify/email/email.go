// Package email sends notifications over SMTP: STARTTLS on the submission port (587) or
// implicit TLS (465), AUTH PLAIN, and a multipart/alternative message with a plain-text and an
// HTML part in Portuguese.
package email

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
)

// Security is how the connection to the SMTP server is protected.
type Security string

const (
	// StartTLS connects in the clear and upgrades with STARTTLS before anything else; a server
	// that does not offer it is refused (no downgrade). The default, for port 587.
	StartTLS Security = "starttls"
	// ImplicitTLS speaks TLS from the first byte (SMTPS, port 465).
	ImplicitTLS Security = "tls"
	// None sends in the clear: only for a relay on the same host (127.0.0.1:25). net/smtp's
	// AUTH PLAIN refuses to send a password in the clear to any other host.
	None Security = "none"
)

// Config is an SMTP account.
type Config struct {
	Addr     string   // host:port
	Security Security // StartTLS when empty
	Username string   // AUTH PLAIN when not empty
	Password string
	From     string // "Monitor do trenzinho <monitor@piuma.es.gov.br>"
	// TLS is the client TLS configuration; ServerName defaults to Addr's host, roots to the
	// system's.
	TLS *tls.Config
	// Hello is the name sent in EHLO; "localhost" when empty.
	Hello string
	// Timeout bounds a whole delivery when the context has no earlier deadline; 30 s when zero.
	Timeout time.Duration
}

// Sender delivers messages through one SMTP server. It is safe for concurrent use: each Send
// opens its own connection (a handful of messages a minute does not need a pool).
type Sender struct {
	cfg  Config
	host string
	from *mail.Address
}

// New checks cfg and returns its Sender.
func New(cfg Config) (*Sender, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: %w", cfg.Addr, err)
	}
	switch cfg.Security {
	case "":
		cfg.Security = StartTLS
	case StartTLS, ImplicitTLS, None:
	default:
		return nil, fmt.Errorf("smtp security %q: want starttls, tls or none", cfg.Security)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp from %q: %w", cfg.From, err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Hello == "" {
		cfg.Hello = "localhost"
	}
	return &Sender{cfg: cfg, host: host, from: from}, nil
}

func (s *Sender) tlsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.cfg.TLS != nil {
		c = s.cfg.TLS.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = s.host
	}
	return c
}

// Send delivers m to the address to. Replies 4xx and network failures are transient; 5xx
// replies, a bad address, a server without STARTTLS and certificate errors are permanent.
func (s *Sender) Send(ctx context.Context, to string, m notify.Message) error {
	rcpt, err := mail.ParseAddress(to)
	if err != nil {
		return notify.Permanent(fmt.Errorf("e-mail address %q: %w", to, err))
	}
	body, err := s.build(rcpt, m, time.Now())
	if err != nil {
		return notify.Permanent(err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.deliver(ctx, rcpt.Address, body); err != nil {
		return classify(ctx, fmt.Errorf("smtp %s to %s: %w", s.cfg.Addr, rcpt.Address, err))
	}
	return nil
}

func (s *Sender) deliver(ctx context.Context, rcpt string, body []byte) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	if s.cfg.Security == ImplicitTLS {
		tc := tls.Client(conn, s.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			return err
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Hello(s.cfg.Hello); err != nil {
		return err
	}
	if s.cfg.Security == StartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errNoStartTLS
		}
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return err
		}
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.host)); err != nil {
			return fmt.Errorf("auth: %w", err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(rcpt); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

var errNoStartTLS = errors.New("server does not offer STARTTLS")

// classify sorts a delivery error into transient and permanent.
func classify(ctx context.Context, err error) error {
	var tp *textproto.Error
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &tp):
		if tp.Code >= 400 && tp.Code < 500 {
			return notify.Transient(err, 0)
		}
		return notify.Permanent(err)
	case errors.Is(err, errNoStartTLS), errors.As(err, &cv), errors.As(err, &ua), errors.As(err, &hn):
		return notify.Permanent(err)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return err // the caller is stopping: neither retried nor dead
	}
	return notify.Transient(err, 0)
}

// build writes the message: headers, then a multipart/alternative body with the plain text and
// the HTML, each quoted-printable in UTF-8.
func (s *Sender) build(to *mail.Address, m notify.Message, now time.Time) ([]byte, error) {
	var b bytes.Buffer
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, part := range []struct{ typ, text string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		if part.text == "" {
			continue
		}
		pw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qw := quotedprintable.NewWriter(pw)
		io.WriteString(qw, strings.ReplaceAll(part.text, "\n", "\r\n"))
		if err := qw.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	id := make([]byte, 12)
	rand.Read(id)
	domain := s.from.Address[strings.LastIndexByte(s.from.Address, '@')+1:]
	hdr := []struct{ k, v string }{
		{"From", s.from.String()},
		{"To", to.String()},
		{"Subject", mime.QEncoding.Encode("utf-8", oneLine(m.Subject))},
		{"Date", now.Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id) + "@" + domain + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "multipart/alternative; boundary=" + mw.Boundary()},
		{"Auto-Submitted", "auto-generated"}, // RFC 3834: no vacation replies
	}
	for _, h := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", h.k, h.v)
	}
	b.WriteString("\r\n")
	b.Write(body.Bytes())
	return b.Bytes(), nil
}

// oneLine keeps a header value on one line whatever the subject holds.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
