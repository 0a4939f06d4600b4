package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnvThenFlag(t *testing.T) {
	env := map[string]string{"TRENZINHO_MQTT_URL": "tcp://env:1883", "TRENZINHO_GAP": "90s", "TRENZINHO_N": "x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	b := &Binder{FS: fs, Lookup: lookup}
	var m MQTT
	var gap time.Duration
	b.BindMQTT(&m)
	b.Duration(&gap, "TRENZINHO_GAP", time.Minute, "gap")
	if err := b.Parse([]string{"--mqtt-user", "flaguser"}); err != nil {
		t.Fatal(err)
	}
	if m.URL != "tcp://env:1883" || m.User != "flaguser" || gap != 90*time.Second {
		t.Fatalf("got %+v gap %v", m, gap)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	b = &Binder{FS: fs, Lookup: lookup}
	b.BindMQTT(&m)
	if err := b.Parse([]string{"--mqtt-url", "tcp://flag:1"}); err != nil || m.URL != "tcp://flag:1" {
		t.Fatalf("flag must override env: %v %q", err, m.URL)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	b = &Binder{FS: fs, Lookup: lookup}
	var n int
	b.Int(&n, "TRENZINHO_N", 3, "n")
	if err := b.Parse(nil); err == nil {
		t.Fatal("bad integer in the environment must be an error")
	}
}

func TestFlagName(t *testing.T) {
	if got := FlagName("TRENZINHO_METRICS_LISTEN"); got != "metrics-listen" {
		t.Fatal(got)
	}
}

func TestLogger(t *testing.T) {
	if _, err := Logger(io.Discard, "debug"); err != nil {
		t.Fatal(err)
	}
	if _, err := Logger(io.Discard, "loud"); err == nil {
		t.Fatal("an unknown log level must be an error, not silently info")
	}
}

// TestTLSConfig: no files, no TLS; a CA that reads is trusted; a CA or client certificate that
// cannot be read, or holds no certificate, is an error that names the file — the message
// ingest, the monitor and the bridge all stop with at start.
func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := write("ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	garbage := write("garbage.pem", []byte("not a certificate\n"))
	missing := filepath.Join(dir, "missing.pem")

	if c, err := (MQTT{}).TLSConfig(); c != nil || err != nil {
		t.Errorf("no files: %v, %v; want no TLS", c, err)
	}
	if c, err := (MQTT{CAFile: ca}).TLSConfig(); err != nil || c == nil || c.RootCAs == nil || c.MinVersion != tls.VersionTLS12 {
		t.Errorf("a good CA: %v, %v", c, err)
	}
	for _, c := range []struct {
		m    MQTT
		want string
	}{
		{MQTT{CAFile: missing}, "config: MQTT CA: open " + missing},
		{MQTT{CAFile: garbage}, "config: MQTT CA " + garbage + ": no certificate"},
		{MQTT{CertFile: missing, KeyFile: missing}, "config: MQTT client certificate: open " + missing},
		{MQTT{CertFile: garbage, KeyFile: garbage}, "config: MQTT client certificate: "},
	} {
		if _, err := c.m.TLSConfig(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q…", c.m, err, c.want)
		}
	}
}
