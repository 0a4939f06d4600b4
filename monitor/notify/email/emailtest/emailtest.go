// Package emailtest runs a real SMTP server (github.com/emersion/go-smtp) on a free local
// port for tests: STARTTLS or implicit TLS with a self-signed certificate made for the test,
// AUTH PLAIN only over TLS, and a mailbox the test reads.
package emailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is one message the server accepted.
type Mail struct {
	From string
	To   []string
	Data []byte // as received, headers and body
	TLS  bool   // the session was encrypted when the message came
	User string // who authenticated
}

// Read decodes the message: its subject and its plain-text and HTML parts, with CRLF as LF.
func (m Mail) Read(t testing.TB) (subject, text, html string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	_, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		s := strings.ReplaceAll(string(b), "\r\n", "\n")
		switch ct := p.Header.Get("Content-Type"); {
		case strings.HasPrefix(ct, "text/html"):
			html = s
		case strings.HasPrefix(ct, "text/plain"):
			text = s
		}
	}
	return subject, text, html
}

// Server is a running SMTP server.
type Server struct {
	Addr     string
	Roots    *x509.CertPool // trusts the server's certificate
	CertPEM  []byte         // the same certificate, PEM, for a client in another process
	Username string
	Password string

	mu       sync.Mutex
	mail     []Mail
	failures []int // reply codes for the next messages' RCPT, consumed in order
	arrived  chan struct{}
}

// Options choose how the server speaks.
type Options struct {
	ImplicitTLS bool // TLS from the first byte; otherwise STARTTLS
	NoTLS       bool // neither: no STARTTLS offered (to test that a client refuses)
}

// Start runs a server until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	cert, roots := selfSigned(t)
	s := &Server{Roots: roots, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), Username: "monitor", Password: "s3nha-de-teste", arrived: make(chan struct{}, 1000)}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, c: c}, nil
	}))
	srv.Domain = "localhost"
	srv.MaxMessageBytes = 1 << 20
	srv.MaxRecipients = 10
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case o.ImplicitTLS:
		l = tls.NewListener(l, tlsConf)
	case !o.NoTLS:
		srv.TLSConfig = tlsConf
	}
	s.Addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// FailNext makes the next len(codes) recipients be refused with those reply codes.
func (s *Server) FailNext(codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, codes...)
}

// Mailbox returns the messages received so far.
func (s *Server) Mailbox() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mail...)
}

// Wait waits until n messages have arrived or the timeout passes, and returns the mailbox.
func (s *Server) Wait(n int, timeout time.Duration) []Mail {
	deadline := time.After(timeout)
	for {
		if m := s.Mailbox(); len(m) >= n {
			return m
		}
		select {
		case <-s.arrived:
		case <-deadline:
			return s.Mailbox()
		}
	}
}

type session struct {
	s    *Server
	c    *smtp.Conn
	user string
	from string
	to   []string
}

func (x *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != x.s.Username || password != x.s.Password {
			return smtp.ErrAuthFailed
		}
		x.user = username
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.user == "" {
		return smtp.ErrAuthRequired
	}
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if len(x.s.failures) > 0 {
		code := x.s.failures[0]
		x.s.failures = x.s.failures[1:]
		return &smtp.SMTPError{Code: code, Message: "refused by the test"}
	}
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(x.to) == 0 {
		return errors.New("no recipients")
	}
	_, isTLS := x.c.TLSConnectionState()
	x.s.mu.Lock()
	x.s.mail = append(x.s.mail, Mail{From: x.from, To: x.to, Data: b, TLS: isTLS, User: x.user})
	x.s.mu.Unlock()
	select {
	case x.s.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and localhost and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "emailtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}
