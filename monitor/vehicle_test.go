package main

// `monitor vehicle add` against a real Mosquitto: the credential it writes is accepted by the
// broker, a wrong one is not, and with the repository's ACL (deploy/mosquitto/acl) each account
// publishes only where docs/protocol.md §1 lets it.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

const vehicleRegistry = `licensees:
  - id: L1
    razao_social: Trenzinho Alegria da Orla Ltda
    cnpj: 11.222.333/0001-81
vehicles:
  - id: PIU-001
    plate: ABC1D23
    licensee: L1
`

// enrolment is the files of a test deployment.
type enrolment struct {
	dir, registry, passwd, acl string
}

func newEnrolment(t *testing.T, acl string) *enrolment {
	t.Helper()
	dir := t.TempDir()
	e := &enrolment{dir: dir, registry: filepath.Join(dir, "registry.yaml"), passwd: filepath.Join(dir, "passwd"), acl: filepath.Join(dir, "acl")}
	if err := os.WriteFile(e.registry, []byte(vehicleRegistry), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.acl, []byte(acl), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// add runs `monitor vehicle add` and returns its standard output.
func (e *enrolment) add(t *testing.T, vehicle string, extra ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	args := append([]string{"add", "--registry", e.registry, "--passwd", e.passwd, "--acl", e.acl,
		"--out", filepath.Join(e.dir, "pi-"+vehicle)}, extra...)
	err := cmdVehicle(append(args, vehicle), &out)
	return out.String(), err
}

// bridgeFiles reads what the command wrote for the Pi: bridge.env's settings and the key.
func (e *enrolment) bridgeFiles(t *testing.T, vehicle string) (map[string]string, ed25519.PrivateKey) {
	t.Helper()
	dir := filepath.Join(e.dir, "pi-"+vehicle)
	for _, name := range []string{"bridge.env", "bridge.key"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	env := map[string]string{}
	f, err := os.Open(filepath.Join(dir, "bridge.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("bridge.env line %q", line)
		}
		env[k] = v
	}
	b, err := os.ReadFile(filepath.Join(dir, "bridge.key"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		t.Fatal("bridge.key is not a PKCS #8 PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		t.Fatalf("bridge.key holds a %T", k)
	}
	return env, key
}

// connect opens an MQTT session as user; it returns the connection error.
func connect(broker *testenv.Mosquitto, clientID, user, password string) (mqtt.Client, error) {
	o := mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID(clientID).SetUsername(user).SetPassword(password).
		SetCleanSession(true).SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(5 * time.Second)
	c := mqtt.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		return nil, errors.New("connect timed out")
	}
	if tok.Error() != nil {
		return nil, tok.Error()
	}
	return c, nil
}

func TestVehicleAdd(t *testing.T) {
	// An ACL with per-user entries: the vehicle's are appended.
	e := newEnrolment(t, "user svc.ingest\ntopic read trenzinho/v1/+/telemetry\n")
	out, err := e.add(t, "PIU-001", "--broker", "ssl://mqtt.example.org:8883")
	if err != nil {
		t.Fatal(err)
	}
	env, key := e.bridgeFiles(t, "PIU-001")
	password := env["TRENZINHO_MQTT_PASSWORD"]
	if len(password) < 24 || env["TRENZINHO_MQTT_USER"] != "PIU-001" || env["TRENZINHO_VEHICLE"] != "PIU-001" ||
		env["TRENZINHO_MQTT_URL"] != "ssl://mqtt.example.org:8883" || env["TRENZINHO_KEY_FILE"] != "/etc/trenzinho/bridge.key" {
		t.Errorf("bridge.env settings %v", env)
	}
	// Nothing secret on standard output; the files are named.
	keyPEM, _ := os.ReadFile(filepath.Join(e.dir, "pi-PIU-001", "bridge.key"))
	for _, secret := range []string{password, string(keyPEM[40:80]), base64.StdEncoding.EncodeToString(key.Seed())} {
		if strings.Contains(out, secret) {
			t.Errorf("standard output shows a secret:\n%s", out)
		}
	}
	if !strings.Contains(out, filepath.Join(e.dir, "pi-PIU-001", "bridge.env")) || !strings.Contains(out, filepath.Join(e.dir, "pi-PIU-001", "bridge.key")) {
		t.Errorf("standard output does not name the files:\n%s", out)
	}

	// The registry holds the public key under the kid of bridge.env; a batch signed with the
	// key verifies with it.
	reg, err := registry.Open(e.registry)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := reg.Vehicle("PIU-001")
	pub, err := v.Ed25519Key()
	if err != nil || !pub.Equal(key.Public()) || v.KeyID != env["TRENZINHO_KID"] || v.Plate != "ABC1D23" {
		t.Fatalf("registered %+v (%v), bridge.env kid %q", v, err, env["TRENZINHO_KID"])
	}
	b := &wire.Batch{V: 1, Vehicle: "PIU-001", Epoch: "e", Seq: 1, SentAt: wire.NewTime(time.Now()), Clock: wire.ClockGPS, Kid: v.KeyID}
	payload, _ := wire.Encode(b, key)
	if err := wire.Verify(payload, pub); err != nil {
		t.Errorf("a batch signed with bridge.key: %v", err)
	}
	acl, _ := os.ReadFile(e.acl)
	if !strings.Contains(string(acl), "user PIU-001\ntopic write trenzinho/v1/PIU-001/telemetry\ntopic write trenzinho/v1/PIU-001/status\n") {
		t.Errorf("ACL:\n%s", acl)
	}

	// Again without --rotate: refused, nothing changed.
	passwdBefore, _ := os.ReadFile(e.passwd)
	regBefore, _ := os.ReadFile(e.registry)
	if _, err := e.add(t, "PIU-001"); err == nil || !strings.Contains(err.Error(), "--rotate") {
		t.Errorf("second add without --rotate: %v", err)
	}
	if p, _ := os.ReadFile(e.passwd); !bytes.Equal(p, passwdBefore) {
		t.Error("a refused add changed the password file")
	}
	if r, _ := os.ReadFile(e.registry); !bytes.Equal(r, regBefore) {
		t.Error("a refused add changed the registry")
	}
	// The registered key alone is reason to refuse (a password file elsewhere, say).
	other := filepath.Join(e.dir, "other-passwd")
	if err := cmdVehicle([]string{"add", "--registry", e.registry, "--passwd", other, "--acl", e.acl,
		"--out", filepath.Join(e.dir, "other-out"), "PIU-001"}, io.Discard); err == nil || !strings.Contains(err.Error(), "já tem a chave") {
		t.Errorf("add of a vehicle with a key, without --rotate: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("a refused add wrote a password file")
	}
	// Unknown vehicles and bad ids are refused.
	if _, err := e.add(t, "PIU-009"); err == nil || !strings.Contains(err.Error(), "não está no cadastro") {
		t.Errorf("unregistered vehicle: %v", err)
	}
	for _, bad := range []string{"_quarantine", "PIU 001", "svc.ingest"} {
		if _, err := e.add(t, bad, "--plate", "ABC1D24", "--licensee", "L1"); err == nil {
			t.Errorf("vehicle id %q accepted", bad)
		}
	}

	// The real broker takes the credential and refuses a wrong one.
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{Extra: []string{"password_file " + e.passwd, "acl_file " + e.acl}})
	c, err := connect(broker, "bridge-PIU-001", "PIU-001", password)
	if err != nil {
		t.Fatalf("the vehicle's credential is refused: %v\n%s", err, broker.Log())
	}
	// It may publish its own telemetry (PUBACK), as the bridge does.
	if tok := c.Publish(wire.TelemetryTopic("PIU-001"), 1, false, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Errorf("publish: %v", tok.Error())
	}
	c.Disconnect(100)
	for _, pw := range []string{password + "x", password[:len(password)-1], "", strings.ToUpper(password)} {
		if c, err := connect(broker, "bridge-wrong", "PIU-001", pw); err == nil {
			c.Disconnect(0)
			t.Errorf("password %q accepted", pw)
		}
	}
	if c, err := connect(broker, "anon", "", ""); err == nil {
		c.Disconnect(0)
		t.Error("anonymous client accepted")
	}

	// --rotate: a new key and password; the broker takes the new one after a reload, the old one
	// no longer.
	if _, err := e.add(t, "PIU-001", "--rotate"); err != nil {
		t.Fatal(err)
	}
	env2, key2 := e.bridgeFiles(t, "PIU-001")
	reg, _ = registry.Open(e.registry)
	v2, _ := reg.Vehicle("PIU-001")
	if key2.Equal(key) || env2["TRENZINHO_MQTT_PASSWORD"] == password || v2.KeyID == v.KeyID || v2.KeyID != env2["TRENZINHO_KID"] {
		t.Errorf("--rotate: kid %q → %q, bridge.env kid %q", v.KeyID, v2.KeyID, env2["TRENZINHO_KID"])
	}
	if users, _ := mosquittoauth.Users(e.passwd); len(users) != 1 {
		t.Errorf("password file users after --rotate: %v", users)
	}
	broker.Stop()
	broker.Restart(t)
	if c, err := connect(broker, "bridge-PIU-001", "PIU-001", env2["TRENZINHO_MQTT_PASSWORD"]); err != nil {
		t.Errorf("rotated credential refused: %v", err)
	} else {
		c.Disconnect(100)
	}
	if c, err := connect(broker, "bridge-old", "PIU-001", password); err == nil {
		c.Disconnect(0)
		t.Error("the old password still works after --rotate")
	}
}

// observer subscribes to everything as a test-only account and counts what arrives per topic.
type observer struct {
	mu  sync.Mutex
	got map[string][]string
}

func (o *observer) has(topic, payload string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range o.got[topic] {
		if p == payload {
			return true
		}
	}
	return false
}

// TestBrokerACL starts a real Mosquitto with the repository's ACL (deploy/mosquitto/acl, read at
// run time, plus a test-only observer that reads everything), a password file made by
// `monitor vehicle add` for PIU-001 and PIU-002 and the service accounts, and proves by counting
// what the observer receives that each account publishes only where docs/protocol.md §1 lets it.
func TestBrokerACL(t *testing.T) {
	repoACL, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "deploy", "mosquitto", "acl"))
	if err != nil {
		t.Fatalf("the repository's ACL: %v", err)
	}
	e := newEnrolment(t, string(repoACL)+"\n# test only\nuser test.observer\ntopic read #\n")
	reg, _ := registry.Open(e.registry)
	if _, err := reg.PutVehicle(registry.Vehicle{ID: "PIU-002", Plate: "ABC1D24", Licensee: "L1"}); err != nil {
		t.Fatal(err)
	}
	aclBefore, _ := os.ReadFile(e.acl)
	for _, v := range []string{"PIU-001", "PIU-002"} {
		out, err := e.add(t, v)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "já permite") {
			t.Errorf("the repository's ACL should cover %s by its patterns:\n%s", v, out)
		}
	}
	if acl, _ := os.ReadFile(e.acl); !bytes.Equal(acl, aclBefore) {
		t.Error("vehicle add changed a pattern ACL that covers the vehicle")
	}
	passwords := map[string]string{}
	for _, v := range []string{"PIU-001", "PIU-002"} {
		env, _ := e.bridgeFiles(t, v)
		passwords[v] = env["TRENZINHO_MQTT_PASSWORD"]
	}
	for _, svc := range []string{"svc.ingest", "svc.monitor", "test.observer"} {
		passwords[svc] = "senha-de-" + svc
		h, err := mosquittoauth.Hash(passwords[svc], nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mosquittoauth.SetPassword(e.passwd, svc, h, false); err != nil {
			t.Fatal(err)
		}
	}
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{Extra: []string{"password_file " + e.passwd, "acl_file " + e.acl}})

	obs := &observer{got: map[string][]string{}}
	oc, err := connect(broker, "observer", "test.observer", passwords["test.observer"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { oc.Disconnect(100) })
	if tok := oc.Subscribe("#", 1, func(_ mqtt.Client, m mqtt.Message) {
		obs.mu.Lock()
		obs.got[m.Topic()] = append(obs.got[m.Topic()], string(m.Payload()))
		obs.mu.Unlock()
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	// A vehicle subscribing to everything gets nothing but its own configuration (vehicles read
	// nothing else), which is published for PIU-002 only as the last message below.
	var snooped sync.Map
	snoop, err := connect(broker, "snoop-PIU-002", "PIU-002", passwords["PIU-002"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snoop.Disconnect(100) })
	if tok := snoop.Subscribe("trenzinho/#", 1, func(_ mqtt.Client, m mqtt.Message) {
		snooped.Store(m.Topic()+" "+string(m.Payload()), true)
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}

	// publish sends one QoS 1 message on a connection of its own, as user; a broker may
	// acknowledge a denied publish and drop it, or close the connection: only what arrives counts.
	n := 0
	publish := func(user, topic string) string {
		n++
		payload := fmt.Sprintf("%s → %s #%d", user, topic, n)
		c, err := connect(broker, fmt.Sprintf("pub-%d", n), user, passwords[user])
		if err != nil {
			t.Fatalf("%s cannot connect: %v", user, err)
		}
		tok := c.Publish(topic, 1, false, payload)
		tok.WaitTimeout(5 * time.Second)
		c.Disconnect(100)
		return payload
	}
	type attempt struct {
		user, topic string
		allowed     bool
	}
	attempts := []attempt{
		{"PIU-001", wire.TelemetryTopic("PIU-001"), true},
		{"PIU-001", wire.StatusTopic("PIU-001"), true},
		{"PIU-001", wire.TelemetryTopic("PIU-002"), false},
		{"PIU-001", wire.StatusTopic("PIU-002"), false},
		{"PIU-001", wire.EpisodesTopic("PIU-001"), false},
		{"PIU-001", wire.QuarantineTopic("PIU-001"), false},
		{"PIU-001", "trenzinho/v1/PIU-001/telemetry/x", false},
		{"PIU-001", "outro/topico", false},
		{"PIU-002", wire.TelemetryTopic("PIU-002"), true},
		{"svc.ingest", wire.QuarantineTopic("PIU-001"), true},
		{"svc.ingest", wire.TelemetryTopic("PIU-001"), false},
		{"svc.ingest", wire.EpisodesTopic("PIU-001"), false},
		{"svc.monitor", wire.EpisodesTopic("PIU-001"), true},
		{"svc.monitor", wire.QuarantineTopic("PIU-001"), false},
		{"svc.monitor", wire.TelemetryTopic("PIU-002"), false},
		// The configuration bundle: the monitor writes it, the vehicle never (it only reads
		// its own, which the snoop below checks for another vehicle's).
		{"svc.monitor", configbundle.Topic("PIU-001"), true},
		{"PIU-001", configbundle.Topic("PIU-001"), false},
		{"PIU-002", configbundle.Topic("PIU-001"), false},
		{"svc.ingest", configbundle.Topic("PIU-001"), false},
	}
	sent := make([]string, len(attempts))
	for i, a := range attempts {
		sent[i] = publish(a.user, a.topic)
	}
	// Last allowed messages, one the observer reads and one the snoop reads: once each has
	// arrived, so has everything published before it (each publish above was acknowledged, or
	// its connection closed, before the next; the broker delivers to a subscriber in order).
	marker := publish("PIU-002", wire.StatusTopic("PIU-002"))
	snoopMarker := publish("svc.monitor", configbundle.Topic("PIU-002"))
	snoopKey := configbundle.Topic("PIU-002") + " " + snoopMarker
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := snooped.Load(snoopKey); ok && obs.has(configbundle.Topic("PIU-002"), snoopMarker) && obs.has(wire.StatusTopic("PIU-002"), marker) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the markers never arrived\n%s", broker.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	snooped.Delete(snoopKey)
	for i, a := range attempts {
		if got := obs.has(a.topic, sent[i]); got != a.allowed {
			t.Errorf("%s publishing to %s: arrived %v, want %v", a.user, a.topic, got, a.allowed)
		}
	}
	// Counted per topic: exactly the allowed messages arrived.
	want := map[string]int{}
	for _, a := range attempts {
		if a.allowed {
			want[a.topic]++
		}
	}
	want[wire.StatusTopic("PIU-002")]++   // the marker
	want[configbundle.Topic("PIU-002")]++ // the snoop's marker
	obs.mu.Lock()
	total, wantTotal := 0, 0
	for topic, msgs := range obs.got {
		if strings.HasPrefix(topic, "$SYS") {
			continue
		}
		total += len(msgs)
		if len(msgs) != want[topic] {
			t.Errorf("%s: %d messages arrived, want %d", topic, len(msgs), want[topic])
		}
	}
	obs.mu.Unlock()
	for _, n := range want {
		wantTotal += n
	}
	if total != wantTotal {
		t.Errorf("%d messages arrived in all, want %d", total, wantTotal)
	}
	snooped.Range(func(k, _ any) bool {
		t.Errorf("vehicle PIU-002 received %s", k)
		return true
	})
	// A vehicle cannot log in as another, nor anonymously.
	if c, err := connect(broker, "x", "PIU-002", passwords["PIU-001"]); err == nil {
		c.Disconnect(0)
		t.Error("PIU-001's password opens PIU-002's account")
	}
	if c, err := connect(broker, "anon", "", ""); err == nil {
		c.Disconnect(0)
		t.Error("anonymous client accepted")
	}
}

// An enrolment is written to the monitor's audit log when its database is given: who
// registered which key, and when.
func TestVehicleAddIsAudited(t *testing.T) {
	e := newEnrolment(t, "pattern write trenzinho/v1/%u/telemetry\npattern write trenzinho/v1/%u/status\n")
	dbPath := filepath.Join(e.dir, "monitor.db")
	ctx := context.Background()
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, err := e.add(t, "PIU-001", "--db", dbPath)
	if err != nil || !strings.Contains(out, "Auditoria: registrada") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if _, err := e.add(t, "PIU-001", "--db", dbPath, "--rotate"); err != nil {
		t.Fatal(err)
	}
	reg, _ := registry.Open(e.registry)
	v, _ := reg.Vehicle("PIU-001")
	db, err = store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, _, err := db.ListAudit(ctx, store.AuditFilter{Object: "vehicle:PIU-001"}, 10, "")
	if err != nil || len(entries) != 2 {
		t.Fatalf("audit: %+v %v", entries, err)
	}
	if e := entries[0]; e.Action != "vehicle.key.rotate" || !strings.HasPrefix(e.User, "cli:") || !strings.Contains(string(e.After), v.KeyID) ||
		!strings.Contains(string(e.After), v.PublicKey) {
		t.Errorf("rotation audited as %+v", e)
	}
	if entries[1].Action != "vehicle.key.add" {
		t.Errorf("enrolment audited as %s", entries[1].Action)
	}

	// A database path that does not exist is not created; the enrolment still happens.
	out, err = e.add(t, "PIU-001", "--db", filepath.Join(e.dir, "nowhere.db"), "--rotate")
	if err != nil || !strings.Contains(out, "não encontrado") {
		t.Errorf("missing database: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "nowhere.db")); err == nil {
		t.Error("a database was created")
	}
}
