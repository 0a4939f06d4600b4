package deploy

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// TestInitSecrets runs deploy/init-secrets.sh as an operator would, then starts the compose
// broker on the files it made and connects over TLS, checking the certificate for the host name.
func TestInitSecrets(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not found (Debian package openssl): init-secrets.sh needs it")
	}
	passwd := needTool(t, "mosquitto_passwd", "mosquitto")
	dir := t.TempDir()
	// As docker compose reads .env: quotes are removed and $$ is a literal $.
	env := "# test\nMQTT_INGEST_PASSWORD=ingest-password-1\nMQTT_MONITOR_PASSWORD=\"monitor-pa$$word-1\"\n" +
		"MQTT_HEALTHCHECK_PASSWORD='healthcheck-password'\nOTHER=x\n"
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testenv.RepoRoot(t), "deploy", "init-secrets.sh")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(script, append([]string{"--dir", dir}, args...)...)
		// The script must find mosquitto_passwd where the tests found it.
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(passwd)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("init-secrets.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	const host = "mqtt.test.invalid"
	run(host, "127.0.0.1")

	tlsDir := filepath.Join(dir, "certs", "mosquitto")
	pwDir := filepath.Join(dir, "secrets", "mosquitto")
	mode := func(p string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Error(err)
			return
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	mode(filepath.Join(dir, "certs", "ca", "ca.key"), 0o600)
	mode(filepath.Join(tlsDir, "server.key"), 0o640)
	mode(filepath.Join(pwDir, "passwd"), 0o600)
	mode(pwDir, 0o700)
	if _, err := os.Stat(filepath.Join(tlsDir, "ca.key")); err == nil {
		t.Error("the CA's private key is in the directory mounted into the broker")
	}

	// The certificate: signed by the CA, for the host name and the address, for a server.
	caPEM, err := os.ReadFile(filepath.Join(tlsDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, "server.crt"), filepath.Join(tlsDir, "server.key"))
	if err != nil {
		t.Fatalf("server.crt and server.key do not match: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{host, "127.0.0.1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the server certificate does not verify for %s: %v", name, err)
		}
	}

	// Running it again keeps the certificate and the vehicles' lines, and updates a password.
	crt, _ := os.ReadFile(filepath.Join(tlsDir, "server.crt"))
	runOK(t, passwd, "-b", filepath.Join(pwDir, "passwd"), "PIU-001", "vehicle-password-1")
	env = strings.Replace(env, "ingest-password-1", "ingest-password-2", 1)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	run()
	if again, _ := os.ReadFile(filepath.Join(tlsDir, "server.crt")); !bytes.Equal(crt, again) {
		t.Error("a second run replaced the server certificate")
	}
	lines, _ := os.ReadFile(filepath.Join(pwDir, "passwd"))
	var users []string
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		u, _, _ := strings.Cut(l, ":")
		users = append(users, u)
	}
	if got := strings.Join(users, " "); got != "svc.ingest svc.monitor svc.healthcheck PIU-001" {
		t.Errorf("password file users after a second run: %s", got)
	}
	if os.Getuid() == 0 {
		for _, p := range []string{filepath.Join(pwDir, "passwd"), filepath.Join(tlsDir, "server.key")} {
			if owner := fileOwner(t, p); owner != 1883 {
				t.Errorf("%s: owner %d, want the container's mosquitto user 1883", p, owner)
			}
		}
	}

	// The broker runs on these files; clients check its certificate for the host name.
	b := startComposeBroker(t, map[string]string{"certs/mosquitto": tlsDir, "secrets/mosquitto": pwDir}, "")
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}
	for user, pw := range map[string]string{"svc.monitor": "monitor-pa$word-1", "svc.ingest": "ingest-password-2", "PIU-001": "vehicle-password-1"} {
		c, err := connect("ssl://"+b.TLS, user, pw, tlsCfg)
		if err != nil {
			t.Errorf("%s cannot connect with the password from .env: %v\n%s", user, err, b.Log())
			continue
		}
		c.Disconnect(0)
	}
	if c, err := connect("ssl://"+b.TLS, "svc.ingest", "ingest-password-1", tlsCfg); err == nil {
		c.Disconnect(0)
		t.Error("the old password of svc.ingest still works after the second run")
	}
	if c, err := connect("ssl://"+b.TLS, "svc.monitor", "monitor-pa$word-1", &tls.Config{RootCAs: pool, ServerName: "other.invalid"}); err == nil {
		c.Disconnect(0)
		t.Error("the certificate is accepted for another host name")
	}
}

func fileOwner(t *testing.T, p string) int {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("file owners are not known on this system")
	}
	return int(st.Uid)
}
