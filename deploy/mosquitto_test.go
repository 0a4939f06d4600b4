package deploy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// The broker of docker-compose.yml, run for real: deploy/mosquitto/compose.conf with the
// container's file system rebuilt in a temporary directory from the compose volumes (repository
// files copied, named volumes empty, the operator's directories filled by the test), its
// listeners on free loopback ports. Mosquitto refuses to start on a configuration, ACL or
// password file it cannot load, so starting it is the first check; the ACL is then exercised
// with real clients.

type directive struct{ Name, Value string }

func mosquittoDirectives(t testing.TB, conf []byte) []directive {
	t.Helper()
	var out []directive
	for _, line := range strings.Split(string(conf), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		out = append(out, directive{name, strings.TrimSpace(value)})
	}
	return out
}

// lookTool finds a program of the mosquitto packages as the harness finds mosquitto:
// $TRENZINHO_<NAME>, .tools/bin, PATH, /usr/sbin.
func lookTool(t testing.TB, name string) string {
	return harness.LookBinary(testenv.RepoRoot(t), "TRENZINHO_"+strings.ToUpper(name), name)
}

// needTool returns a program's path; a missing one skips the test, or fails it in CI.
func needTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p := lookTool(t, name)
	if p == "" {
		testenv.Missing(t, "%s not found (Debian package %s)", name, pkg)
	}
	return p
}

func runOK(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// broker is a running compose broker.
type broker struct {
	Plain, TLS string // host:port of the listeners that compose.conf puts on 1883 and 8883
	Log        func() string
}

// startComposeBroker starts Mosquitto as docker-compose.yml would. operatorDirs gives the
// host directory to use for each expected-absent directory; extraACL is appended to the ACL.
func startComposeBroker(t *testing.T, operatorDirs map[string]string, extraACL string) *broker {
	t.Helper()
	bin := needTool(t, "mosquitto", "mosquitto")
	root := testenv.RepoRoot(t)
	c := loadCompose(t)
	env := loadEnvExample(t).Values
	fsRoot := filepath.Join(t.TempDir(), "container")

	// The container's file system, from the compose volumes.
	for _, m := range c.mounts(t, "mosquitto") {
		dst := filepath.Join(fsRoot, filepath.FromSlash(m.Target))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if !m.Bind {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		src, _, err := interpolate(m.Source, env)
		if err != nil {
			t.Fatal(err)
		}
		rel := path.Clean(src)
		if dir, ok := operatorDirs[rel]; ok {
			if err := os.Symlink(dir, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		hostPath := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Stat(hostPath)
		if err != nil {
			t.Fatalf("mosquitto volume %s: %v", m.Source, err)
		}
		if fi.IsDir() {
			if err := os.Symlink(hostPath, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(hostPath)
		if err != nil {
			t.Fatal(err)
		}
		if m.Target == "/mosquitto/config/acl" {
			b = append(b, "\n"+extraACL+"\n"...)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The -c file, with its paths moved into that file system and its listeners to loopback.
	cmd := stringList(c.Services["mosquitto"]["command"])
	confPath := ""
	for i, a := range cmd {
		if a == "-c" && i+1 < len(cmd) {
			confPath = cmd[i+1]
		}
	}
	conf, err := os.ReadFile(filepath.Join(fsRoot, filepath.FromSlash(confPath)))
	if err != nil {
		t.Fatalf("mosquitto -c %s: %v", confPath, err)
	}
	ports := map[string]string{}
	var out strings.Builder
	if os.Getuid() == 0 {
		// As root Mosquitto drops to the user "mosquitto", which cannot read the test's files.
		out.WriteString("user root\n")
	}
	for _, d := range mosquittoDirectives(t, conf) {
		switch d.Name {
		case "listener":
			f := strings.Fields(d.Value)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			ports[f[0]] = addr
			_, port, _ := net.SplitHostPort(addr)
			fmt.Fprintf(&out, "listener %s 127.0.0.1\n", port)
		case "cafile", "certfile", "keyfile", "password_file", "acl_file", "include_dir", "persistence_location", "capath", "crlfile":
			fmt.Fprintf(&out, "%s %s\n", d.Name, filepath.Join(fsRoot, filepath.FromSlash(d.Value))+map[bool]string{true: "/"}[strings.HasSuffix(d.Value, "/")])
		case "user", "log_dest", "pid_file":
			t.Fatalf("compose.conf: %s belongs to the image or the tuned file", d.Name)
		default:
			fmt.Fprintf(&out, "%s %s\n", d.Name, d.Value)
		}
	}
	if ports["1883"] == "" || ports["8883"] == "" {
		t.Fatalf("compose.conf: listeners %v, want 1883 and 8883", ports)
	}
	testConf := filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(testConf, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	var logBuf safeBuffer
	proc := exec.Command(bin, "-c", testConf)
	proc.Stdout, proc.Stderr = &logBuf, &logBuf
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = proc.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = proc.Process.Kill()
		<-exited
	})
	b := &broker{Plain: ports["1883"], TLS: ports["8883"], Log: logBuf.String}
	deadline := time.Now().Add(15 * time.Second)
	for _, addr := range []string{b.Plain, b.TLS} {
		for {
			select {
			case <-exited:
				t.Fatalf("mosquitto exited (%v) with the compose configuration:\n%s\n--- configuration:\n%s", waitErr, logBuf.String(), out.String())
			default:
			}
			conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("mosquitto does not listen on %s:\n%s", addr, logBuf.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return b
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testPKI writes a CA and a server certificate for localhost/127.0.0.1 as deploy/init-secrets.sh
// does (ca.crt, server.crt, server.key), and returns the CA pool.
func testPKI(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.crt", "CERTIFICATE", caDER)
	write("server.crt", "CERTIFICATE", der)
	write("server.key", "PRIVATE KEY", keyDER)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool
}

// passwdFile writes a Mosquitto password file with mosquitto_passwd, as operators do.
func passwdFile(t *testing.T, dir string, accounts map[string]string) {
	t.Helper()
	bin := needTool(t, "mosquitto_passwd", "mosquitto")
	p := filepath.Join(dir, "passwd")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range sortedKeys(accounts) {
		runOK(t, bin, "-b", p, u, accounts[u])
	}
}

// client is an MQTT client that records what it receives.
type client struct {
	mqtt.Client
	mu  sync.Mutex
	got map[string]string // payload → topic
	ch  chan struct{}
}

func connect(url, user, password string, tlsCfg *tls.Config) (*client, error) {
	c := &client{got: map[string]string{}, ch: make(chan struct{}, 1000)}
	o := mqtt.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("%s-%d", strings.ReplaceAll(user, ".", "-"), time.Now().UnixNano())).
		SetUsername(user).SetPassword(password).SetCleanSession(true).SetAutoReconnect(false).
		SetConnectTimeout(5 * time.Second).SetTLSConfig(tlsCfg).
		SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) {
			c.mu.Lock()
			c.got[string(m.Payload())] = m.Topic()
			c.mu.Unlock()
			c.ch <- struct{}{}
		})
	c.Client = mqtt.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		return nil, fmt.Errorf("connect %s as %s: timeout", url, user)
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *client) received(payload string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	topic, ok := c.got[payload]
	return topic, ok
}

// waitFor waits until the client received payload.
func (c *client) waitFor(payload string, d time.Duration) bool {
	deadline := time.After(d)
	for {
		if _, ok := c.received(payload); ok {
			return true
		}
		select {
		case <-c.ch:
		case <-deadline:
			return false
		}
	}
}

func TestMosquittoComposeACL(t *testing.T) {
	certs, secrets := t.TempDir(), t.TempDir()
	pool := testPKI(t, certs)
	pw := map[string]string{
		"svc.ingest": "ingest-password-1", "svc.monitor": "monitor-password-1", "svc.healthcheck": "healthcheck-password-1",
		"PIU-001": "vehicle-one-password", "PIU-002": "vehicle-two-password", "test.observer": "observer-password-1",
	}
	passwdFile(t, secrets, pw)
	// The observer is the test's own account: it reads everything under trenzinho/ so that the
	// test sees what each account can publish.
	b := startComposeBroker(t, map[string]string{"certs/mosquitto": certs, "secrets/mosquitto": secrets},
		"user test.observer\ntopic read trenzinho/#")
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}

	must := func(c *client, err error) *client {
		t.Helper()
		if err != nil {
			t.Fatalf("%v\n%s", err, b.Log())
		}
		t.Cleanup(func() { c.Disconnect(100) })
		return c
	}
	sub := func(c *client, filter string) byte {
		t.Helper()
		tok := c.Subscribe(filter, 1, nil)
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", filter, tok.Error())
		}
		return tok.(*mqtt.SubscribeToken).Result()[filter]
	}
	observer := must(connect("tcp://"+b.Plain, "test.observer", pw["test.observer"], nil))
	sub(observer, "trenzinho/#")
	monitor := must(connect("tcp://"+b.Plain, "svc.monitor", pw["svc.monitor"], nil))
	for _, f := range []string{"trenzinho/v1/+/telemetry", "trenzinho/v1/+/status", "trenzinho/v1/_sys/quarantine/+"} {
		sub(monitor, f)
	}
	ingest := must(connect("tcp://"+b.Plain, "svc.ingest", pw["svc.ingest"], nil))
	sub(ingest, "$share/ingest/trenzinho/v1/+/telemetry")
	v1 := must(connect("ssl://"+b.TLS, "PIU-001", pw["PIU-001"], tlsCfg))
	v2 := must(connect("ssl://"+b.TLS, "PIU-002", pw["PIU-002"], tlsCfg))
	if code := sub(v1, "trenzinho/v1/+/telemetry"); code != 0x80 {
		t.Logf("a vehicle's subscription to every telemetry got SUBACK %#x (its messages are checked below)", code)
	}
	sub(v1, "trenzinho/v1/PIU-002/status")

	n := 0
	publishRetained := func(c *client, topic string, retained bool) string {
		t.Helper()
		n++
		payload := fmt.Sprintf("m%d %s", n, topic)
		tok := c.Publish(topic, 1, retained, payload)
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish %s: %v", topic, tok.Error())
		}
		return payload
	}
	publish := func(c *client, topic string) string {
		t.Helper()
		return publishRetained(c, topic, false)
	}
	// step publishes the denied topics, then an allowed marker from the same client: the broker
	// keeps one client's order, so once the marker arrived a denied message would have too.
	step := func(name string, c *client, allowed string, denied ...string) string {
		t.Helper()
		var deniedPayloads []string
		for _, topic := range denied {
			deniedPayloads = append(deniedPayloads, publish(c, topic))
		}
		marker := publish(c, allowed)
		if !observer.waitFor(marker, 5*time.Second) {
			t.Errorf("%s: %s was not delivered\n%s", name, allowed, b.Log())
			return marker
		}
		for i, p := range deniedPayloads {
			if _, ok := observer.received(p); ok {
				t.Errorf("%s: may publish %s", name, denied[i])
			}
		}
		return marker
	}
	step("vehicle PIU-001", v1, "trenzinho/v1/PIU-001/telemetry",
		"trenzinho/v1/PIU-002/telemetry", "trenzinho/v1/PIU-002/status", "trenzinho/v1/PIU-001/episodes",
		"trenzinho/v1/_sys/quarantine/PIU-001", "trenzinho/v1/PIU-001/telemetry/x", "trenzinho/v2/PIU-001/telemetry")
	step("vehicle PIU-001 status", v1, "trenzinho/v1/PIU-001/status")
	quarantined := step("svc.ingest", ingest, "trenzinho/v1/_sys/quarantine/PIU-001",
		"trenzinho/v1/PIU-001/telemetry", "trenzinho/v1/PIU-001/status", "trenzinho/v1/PIU-001/episodes")
	step("svc.monitor", monitor, "trenzinho/v1/PIU-001/episodes",
		"trenzinho/v1/PIU-001/telemetry", "trenzinho/v1/PIU-001/status", "trenzinho/v1/_sys/quarantine/PIU-001")

	// Readers: ingest and the monitor got PIU-001's telemetry, the monitor its status and the
	// quarantine record; a vehicle reads nothing, not even another vehicle's telemetry.
	telemetry := publish(v2, "trenzinho/v1/PIU-002/telemetry")
	// Retained, as the bridges publish it: a reader that subscribes later gets it at once.
	status := publishRetained(v2, "trenzinho/v1/PIU-002/status", true)
	for _, w := range []struct {
		who *client
		p   string
	}{{monitor, telemetry}, {monitor, status}, {ingest, telemetry}} {
		if !w.who.waitFor(w.p, 5*time.Second) {
			t.Errorf("%q was not delivered to its reader", w.p)
		}
	}
	if !monitor.waitFor(quarantined, 5*time.Second) {
		t.Errorf("the monitor did not receive the quarantine record; it got %v", monitor.got)
	}
	observer.waitFor(status, 5*time.Second)
	if got := len(v1.got); got != 0 {
		t.Errorf("vehicle PIU-001 received %d messages of others: %v", got, v1.got)
	}

	// Authentication: no anonymous client, no wrong password, and TLS really on 8883.
	if c, err := connect("tcp://"+b.Plain, "", "", nil); err == nil {
		c.Disconnect(0)
		t.Error("an anonymous client may connect")
	}
	if c, err := connect("ssl://"+b.TLS, "PIU-001", "wrong-password", tlsCfg); err == nil {
		c.Disconnect(0)
		t.Error("a wrong password is accepted")
	}
	if c, err := connect("ssl://"+b.TLS, "PIU-001", pw["PIU-001"], &tls.Config{ServerName: "localhost", MinVersion: tls.VersionTLS12}); err == nil {
		c.Disconnect(0)
		t.Error("the TLS listener's certificate is trusted without the CA: TLS is not on")
	}
	if c, err := connect("tcp://"+b.TLS, "PIU-001", pw["PIU-001"], nil); err == nil {
		c.Disconnect(0)
		t.Error("the TLS listener accepts a plain connection")
	}

	// The compose health check, as written, against the plain listener.
	if sub := lookTool(t, "mosquitto_sub"); sub != "" {
		c := loadCompose(t)
		test := stringList(c.Services["mosquitto"]["healthcheck"].(map[string]any)["test"])
		env := map[string]string{"MQTT_HEALTHCHECK_PASSWORD": pw["svc.healthcheck"]}
		var argv []string
		for i, a := range test[1:] {
			s, _, err := interpolate(a, env)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && test[i] == "-p" {
				_, s, _ = net.SplitHostPort(b.Plain)
			}
			argv = append(argv, s)
		}
		if argv[0] != "mosquitto_sub" {
			t.Fatalf("healthcheck runs %s", argv[0])
		}
		if out, err := exec.Command(sub, argv[1:]...).CombinedOutput(); err != nil {
			t.Errorf("the compose health check fails against the broker: %v\n%s", err, out)
		}
		// The health-check account reads nothing else, not even the retained status above.
		argv[indexOf(argv, "-t")+1] = "trenzinho/#"
		argv[indexOf(argv, "-W")+1] = "2"
		if out, err := exec.Command(sub, argv[1:]...).CombinedOutput(); err == nil {
			t.Errorf("the health-check account reads trenzinho/#: %s", out)
		}
	}
}

// indexOf returns the index of s in list (-1 when absent).
func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
