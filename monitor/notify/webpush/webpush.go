// Package webpush sends notifications to the installed dashboard through the browser's push
// service: the payload encrypted with aes128gcm (RFC 8291) and the request signed with VAPID
// (RFC 8292).
package webpush

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
)

// Subscription is the browser's PushSubscription as its toJSON() gives it; the address of a
// web push user is this JSON.
type Subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// ParseSubscription reads and checks a subscription: an https endpoint without user
// information of at most MaxEndpoint characters, a P-256 point and a 16-byte secret. Where the
// endpoint may lead is the Sender's Policy.
func ParseSubscription(s string) (Subscription, []byte, []byte, error) {
	var sub Subscription
	if len(s) > 4096 {
		return sub, nil, nil, errors.New("subscription too long")
	}
	if err := json.Unmarshal([]byte(s), &sub); err != nil {
		return sub, nil, nil, fmt.Errorf("subscription: %w", err)
	}
	if len(sub.Endpoint) > MaxEndpoint {
		return sub, nil, nil, fmt.Errorf("subscription endpoint: longer than %d characters", MaxEndpoint)
	}
	u, err := url.Parse(sub.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return sub, nil, nil, fmt.Errorf("subscription endpoint %q: want an https URL", sub.Endpoint)
	}
	if u.User != nil {
		return sub, nil, nil, errors.New("subscription endpoint: user information in the URL")
	}
	p256dh, err := b64(sub.Keys.P256dh)
	if err != nil {
		return sub, nil, nil, fmt.Errorf("subscription p256dh: %w", err)
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil {
		return sub, nil, nil, fmt.Errorf("subscription p256dh: %w", err)
	}
	auth, err := b64(sub.Keys.Auth)
	if err != nil || len(auth) != 16 {
		return sub, nil, nil, fmt.Errorf("subscription auth: want 16 bytes in base64url")
	}
	return sub, p256dh, auth, nil
}

// b64 decodes base64url with or without padding (browsers give it without).
func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// Keys is the application server's VAPID key pair.
type Keys struct {
	Private *ecdsa.PrivateKey
}

// GenerateKeys makes a new VAPID key pair.
func GenerateKeys() (Keys, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return Keys{Private: k}, err
}

// ParseKeys reads a private key as base64url of its 32-byte scalar (what web-push tools print).
func ParseKeys(private string) (Keys, error) {
	d, err := b64(strings.TrimSpace(private))
	if err != nil {
		return Keys{}, fmt.Errorf("vapid private key: %w", err)
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return Keys{}, fmt.Errorf("vapid private key: %w", err)
	}
	return Keys{Private: k}, nil
}

// PrivateString is the private key as ParseKeys reads it.
func (k Keys) PrivateString() string {
	d, _ := k.Private.Bytes()
	return base64.RawURLEncoding.EncodeToString(d)
}

// PublicString is the public key (uncompressed point, base64url): the applicationServerKey the
// dashboard passes to pushManager.subscribe.
func (k Keys) PublicString() string {
	p, _ := k.Private.PublicKey.Bytes()
	return base64.RawURLEncoding.EncodeToString(p)
}

// Sender posts encrypted messages to push services.
type Sender struct {
	Keys Keys
	// Subject is the contact the push service may use (RFC 8292 §2.1): "mailto:" or https.
	Subject string
	// TTL is how long the push service keeps an undelivered message; 1 h when zero (an
	// alert older than that is better read on the dashboard).
	TTL time.Duration
	// Policy is where the requests may go (guard.go); the zero Policy allows the well-known
	// push services on public addresses only.
	Policy Policy
	// TLS is the TLS configuration of the connections; the system's roots when nil.
	TLS *tls.Config
	// now is the clock for the token's expiry; time.Now when nil.
	now func() time.Time

	once   sync.Once
	client *http.Client
}

// payload is what the dashboard's service worker receives and shows.
type payload struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	URL   string `json:"url,omitempty"`
	Tag   string `json:"tag,omitempty"`
	Count int    `json:"count"`
}

// maxBody bounds the notification's body: a phone shows a few lines.
const maxBody = 1000

// Send pushes m to the subscription (JSON). 404 and 410 (the subscription is gone), other 4xx
// and 3xx (redirects are not followed), a malformed subscription and an endpoint the Policy
// refuses (before or when connecting) are permanent; 429 and 5xx are transient.
func (s *Sender) Send(ctx context.Context, subscription string, m notify.Message) error {
	sub, p256dh, auth, err := ParseSubscription(subscription)
	if err != nil {
		return notify.Permanent(err)
	}
	if err := s.Policy.CheckEndpoint(sub.Endpoint); err != nil {
		return notify.Permanent(err)
	}
	body := m.Text
	if r := []rune(body); len(r) > maxBody {
		body = string(r[:maxBody-1]) + "…"
	}
	plain, err := json.Marshal(payload{Title: m.Subject, Body: body, URL: m.Link, Tag: m.Tag, Count: m.Count})
	if err != nil {
		return notify.Permanent(err)
	}
	asKey, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	sealed, err := encrypt(plain, p256dh, auth, salt, asKey)
	if err != nil {
		return notify.Permanent(err)
	}
	u, _ := url.Parse(sub.Endpoint)
	token, err := s.vapidToken(u.Scheme + "://" + u.Host)
	if err != nil {
		return notify.Permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint, bytes.NewReader(sealed))
	if err != nil {
		return notify.Permanent(err)
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("TTL", strconv.Itoa(int(ttl/time.Second)))
	req.Header.Set("Urgency", "high")
	req.Header.Set("Authorization", "vapid t="+token+", k="+s.Keys.PublicString())
	s.once.Do(func() { s.client = s.Policy.Client(s.TLS) })
	resp, err := s.client.Do(req)
	if err != nil {
		err = fmt.Errorf("web push to %s: %w", u.Host, err)
		if errors.Is(err, ErrRefusedEndpoint) {
			return notify.Permanent(err)
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			return err
		}
		return notify.Transient(err, 0)
	}
	defer resp.Body.Close()
	detail, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("web push to %s: %s %s", u.Host, resp.Status, strings.TrimSpace(string(detail)))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return notify.Permanent(fmt.Errorf("%w: %w", ErrGone, err))
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		var after time.Duration
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
			after = time.Duration(n) * time.Second
		}
		return notify.Transient(err, after)
	}
	return notify.Permanent(err)
}

// ErrGone: the push service no longer knows the subscription (the user unsubscribed or the
// browser dropped it); it should be removed.
var ErrGone = errors.New("subscription gone")

// vapidToken is the ES256 JWT of RFC 8292 §2: the push service's origin as audience, an expiry
// 12 hours ahead (at most 24 h allowed) and the contact.
func (s *Sender) vapidToken(audience string) (string, error) {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	if s.Keys.Private == nil {
		return "", errors.New("no VAPID key")
	}
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"typ":"JWT","alg":"ES256"}`))
	claims, err := json.Marshal(map[string]any{"aud": audience, "exp": now().Add(12 * time.Hour).Unix(), "sub": s.Subject})
	if err != nil {
		return "", err
	}
	signing := header + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	r, ss, err := ecdsa.Sign(rand.Reader, s.Keys.Private, digest[:])
	if err != nil {
		return "", err
	}
	// JWS ES256: the signature is R ‖ S, each 32 bytes big-endian (RFC 7518 §3.4).
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	return signing + "." + enc.EncodeToString(sig), nil
}
