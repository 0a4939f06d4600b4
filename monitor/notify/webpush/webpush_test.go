package webpush

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
)

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := b64(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncryptRFC8291Vector encrypts the example of RFC 8291 Appendix A with its keys and salt
// and compares every byte of the result with the RFC's.
func TestEncryptRFC8291Vector(t *testing.T) {
	const (
		plaintext = "When I grow up, I want to be a watermelon"
		asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
		asPublic  = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
		uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
		uaPublic  = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
		salt      = "DGv6ra1nlYgDCS1FRnbzlw"
		auth      = "BTBZMqHH6r4Tts7J_aSIgg"
		want      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml" +
			"mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT" +
			"pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
	)
	as, err := ecdh.P256().NewPrivateKey(mustB64(t, asPrivate))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(as.PublicKey().Bytes(), mustB64(t, asPublic)) {
		t.Fatal("the RFC's as_public does not match its as_private")
	}
	got, err := encrypt([]byte(plaintext), mustB64(t, uaPublic), mustB64(t, auth), mustB64(t, salt), as)
	if err != nil {
		t.Fatal(err)
	}
	if enc := base64.RawURLEncoding.EncodeToString(got); enc != want {
		t.Fatalf("ciphertext\n got %s\nwant %s", enc, want)
	}
	// And the user agent's side opens it.
	ua, err := ecdh.P256().NewPrivateKey(mustB64(t, uaPrivate))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := decrypt(got, ua, mustB64(t, auth))
	if err != nil || string(plain) != plaintext {
		t.Fatalf("decrypt: %q %v", plain, err)
	}
}

// decrypt is the user agent's side of RFC 8291, written apart from encrypt: it reads the key
// and salt from the header, derives the keys and opens the record.
func decrypt(body []byte, ua *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("short")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idlen || rs < 18 {
		return nil, errors.New("bad header")
	}
	asPub, record := body[21:21+idlen], body[21+idlen:]
	if len(record) > int(rs) {
		return nil, errors.New("more than one record")
	}
	as, err := ecdh.P256().NewPublicKey(asPub)
	if err != nil {
		return nil, err
	}
	shared, err := ua.ECDH(as)
	if err != nil {
		return nil, err
	}
	info := "WebPush: info\x00" + string(ua.PublicKey().Bytes()) + string(asPub)
	ikm, _ := hkdf.Key(sha256.New, shared, auth, info, 32)
	cek, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, err
	}
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 0x02 {
		return nil, errors.New("no last-record delimiter")
	}
	return plain[:len(plain)-1], nil
}

// verifyVAPID checks an Authorization header as a push service does (RFC 8292 §3): the JWT's
// ES256 signature against the key k, and its claims. It returns the claims.
func verifyVAPID(header string) (map[string]any, error) {
	rest, ok := strings.CutPrefix(header, "vapid ")
	if !ok {
		return nil, fmt.Errorf("scheme of %q", header)
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	kb, err := base64.RawURLEncoding.DecodeString(params["k"])
	if err != nil {
		return nil, err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), kb)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(params["t"], ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWT")
	}
	var hdr map[string]string
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &hdr); err != nil || hdr["alg"] != "ES256" {
		return nil, fmt.Errorf("header %s", hb)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("signature is not R‖S")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("signature does not verify")
	}
	var claims map[string]any
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(cb, &claims); err != nil {
		return nil, err
	}
	return claims, nil
}

func TestVAPIDToken(t *testing.T) {
	keys, err := GenerateKeys()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseKeys(keys.PrivateString())
	if err != nil || again.PublicString() != keys.PublicString() {
		t.Fatalf("keys do not round-trip: %v", err)
	}
	now := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	s := &Sender{Keys: again, Subject: "mailto:fiscalizacao@piuma.example", now: func() time.Time { return now }}
	tok, err := s.vapidToken("https://fcm.googleapis.com")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := verifyVAPID("vapid t=" + tok + ", k=" + keys.PublicString())
	if err != nil {
		t.Fatal(err)
	}
	if claims["aud"] != "https://fcm.googleapis.com" || claims["sub"] != "mailto:fiscalizacao@piuma.example" ||
		claims["exp"] != float64(now.Add(12*time.Hour).Unix()) {
		t.Errorf("claims %v", claims)
	}
	// A token signed by another key does not verify.
	other, _ := GenerateKeys()
	if _, err := verifyVAPID("vapid t=" + tok + ", k=" + other.PublicString()); err == nil {
		t.Error("a token verified with the wrong key")
	}
}

// pushService is a local push service over TLS that checks what RFC 8030/8291/8292 require of
// a request and keeps the decrypted payloads.
type pushService struct {
	*httptest.Server
	ua   *ecdh.PrivateKey
	auth []byte

	mu       sync.Mutex
	payloads []payload
	status   []int // scripted replies
	problems []string
}

func startPushService(t *testing.T) *pushService {
	ua, _ := ecdh.P256().GenerateKey(rand.Reader)
	p := &pushService{ua: ua, auth: make([]byte, 16)}
	rand.Read(p.auth)
	p.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		fail := func(format string, args ...any) {
			p.problems = append(p.problems, fmt.Sprintf(format, args...))
			w.WriteHeader(http.StatusBadRequest)
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("TTL") == "" {
			fail("method %s headers %v", r.Method, r.Header)
			return
		}
		claims, err := verifyVAPID(r.Header.Get("Authorization"))
		if err != nil {
			fail("vapid: %v", err)
			return
		}
		if claims["aud"] != p.URL {
			fail("aud %v, want %s", claims["aud"], p.URL)
			return
		}
		if len(p.status) > 0 {
			code := p.status[0]
			p.status = p.status[1:]
			if code == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "30")
			}
			w.WriteHeader(code)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 8192))
		plain, err := decrypt(body, p.ua, p.auth)
		if err != nil {
			fail("decrypt: %v", err)
			return
		}
		var pl payload
		if err := json.Unmarshal(plain, &pl); err != nil {
			fail("payload: %v", err)
			return
		}
		p.payloads = append(p.payloads, pl)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(func() {
		p.Close()
		for _, pr := range p.problems {
			t.Errorf("push service: %s", pr)
		}
	})
	return p
}

// policy is the permissive policy a test needs for its local push service: its address,
// loopback, allowed explicitly. Production never sets Allow.
func (p *pushService) policy() Policy {
	return Policy{Hosts: []string{"127.0.0.1"}, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

// tls trusts the local push service's certificate.
func (p *pushService) tls() *tls.Config {
	return p.Client().Transport.(*http.Transport).TLSClientConfig
}

func (p *pushService) subscription(path string) string {
	b, _ := json.Marshal(map[string]any{"endpoint": p.URL + path, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(p.ua.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(p.auth)}})
	return string(b)
}

func TestSend(t *testing.T) {
	ps := startPushService(t)
	keys, _ := GenerateKeys()
	s := &Sender{Keys: keys, Subject: "mailto:f@piuma.example", Policy: ps.policy(), TLS: ps.tls()}
	m := notify.Message{Subject: "[Trenzinho] Excesso de velocidade — TR-01 às 14:32", Text: strings.Repeat("á", 3000),
		Link: "https://monitor.example/#/episodio/e1", Tag: "e1", Count: 3}
	ctx := context.Background()
	if err := s.Send(ctx, ps.subscription("/push/abc"), m); err != nil {
		t.Fatal(err)
	}
	if len(ps.payloads) != 1 {
		t.Fatalf("%d payloads", len(ps.payloads))
	}
	got := ps.payloads[0]
	if got.Title != m.Subject || got.URL != m.Link || got.Tag != "e1" || got.Count != 3 || len([]rune(got.Body)) != maxBody {
		t.Errorf("payload %+v", got)
	}

	for _, c := range []struct {
		status    int
		transient bool
		gone      bool
	}{{410, false, true}, {404, false, true}, {429, true, false}, {503, true, false}, {413, false, false}} {
		ps.mu.Lock()
		ps.status = append(ps.status, c.status)
		ps.mu.Unlock()
		err := s.Send(ctx, ps.subscription("/push/abc"), m)
		tr, after := notify.Classify(err)
		if err == nil || tr != c.transient || errors.Is(err, ErrGone) != c.gone {
			t.Errorf("%d: %v (transient %v)", c.status, err, tr)
		}
		if c.status == 429 && after != 30*time.Second {
			t.Errorf("429: retry after %v", after)
		}
	}

	for _, bad := range []string{`{}`, `{"endpoint":"http://push.example/x","keys":{"p256dh":"","auth":""}}`, "not json",
		strings.Replace(ps.subscription("/x"), `"auth":"`, `"auth":"AA`, 1)} {
		if err := s.Send(ctx, bad, m); err == nil {
			t.Errorf("sent to %s", bad)
		} else if tr, _ := notify.Classify(err); tr {
			t.Errorf("%s: a bad subscription is transient", bad)
		}
	}
}

func FuzzParseSubscription(f *testing.F) {
	f.Add(`{"endpoint":"https://fcm.googleapis.com/fcm/send/abc","keys":{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}}`)
	f.Add(`{"endpoint":"https://x","keys":{"p256dh":"AA==","auth":"BTBZMqHH6r4Tts7J_aSIgg=="}}`)
	f.Fuzz(func(t *testing.T, s string) {
		sub, p, a, err := ParseSubscription(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(sub.Endpoint, "https://") || len(a) != 16 || len(p) != 65 {
			t.Fatalf("accepted %q", s)
		}
	})
}
