package e2e

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

const signedRegistry = `licensees:
  - id: L1
    razao_social: Trenzinho Alegria da Orla Ltda
    cnpj: 11.222.333/0001-81
vehicles:
  - id: PIU-001
    plate: ABC1D23
    licensee: L1
  - id: PIU-002
    plate: ABC1D24
    licensee: L1
`

// readEnv reads a bridge.env written by `monitor vehicle add`.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = v
		}
	}
	return env
}

// scrapeMetric reads one sample of the monitor's /metrics (0 when absent).
func scrapeMetric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// TestSignedTelemetryEndToEnd: `monitor vehicle add` enrols two vehicles (password, key, registry)
// on a Mosquitto with the repository's ACL; the real bridge of PIU-001 runs with the settings and
// key it produced and signs its batches; the monitor, whose profile requires signatures, judges
// them. Someone holding PIU-002's broker password but not its key publishes forged and unsigned
// batches: the monitor acknowledges and counts them, and never judges them.
func TestSignedTelemetryEndToEnd(t *testing.T) {
	bin := testenv.Build(t)
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.yaml")
	passwd := filepath.Join(dir, "passwd")
	acl := filepath.Join(dir, "acl")
	if err := os.WriteFile(reg, []byte(signedRegistry), 0o600); err != nil {
		t.Fatal(err)
	}
	repoACL, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "deploy", "mosquitto", "acl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(acl, repoACL, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"PIU-001", "PIU-002"} {
		out, err := exec.Command(filepath.Join(bin, "monitor"), "vehicle", "add", "--registry", reg, "--passwd", passwd,
			"--acl", acl, "--out", filepath.Join(dir, v), v).CombinedOutput()
		if err != nil {
			t.Fatalf("monitor vehicle add %s: %v\n%s", v, err, out)
		}
	}
	h, _ := mosquittoauth.Hash("senha-do-monitor", nil)
	if err := mosquittoauth.SetPassword(passwd, "svc.monitor", h, false); err != nil {
		t.Fatal(err)
	}
	// The Piúma profile with signatures required.
	prof, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "profiles", "piuma.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	profPath := filepath.Join(dir, "piuma-signed.yaml")
	signed := strings.Replace(string(prof), "\nsignatures_required: false", "\nsignatures_required: true", 1)
	if signed == string(prof) {
		t.Fatal("piuma.yaml has no top-level signatures_required: false")
	}
	if err := os.WriteFile(profPath, []byte(signed), 0o644); err != nil {
		t.Fatal(err)
	}

	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{Extra: []string{"password_file " + passwd, "acl_file " + acl}})
	mon := &runningMonitor{Monitor: testenv.StartMonitor(t, bin, broker.URL(), filepath.Join(dir, "monitor.db"),
		"TRENZINHO_MQTT_USER=svc.monitor",
		"TRENZINHO_MQTT_PASSWORD=senha-do-monitor",
		"TRENZINHO_REGISTRY="+reg,
		"TRENZINHO_PROFILE="+profPath,
		maxAgeEnv,
		"TRENZINHO_MONITOR_CLIENT_ID=monitor-signed",
	)}
	mon.login(t)
	testenv.WaitFor(t, "the monitor subscribed", 30*time.Second, func() bool {
		return strings.Contains(mon.Log(), "connected to the broker")
	})

	// PIU-001: the real bridge with what `vehicle add` wrote for its Pi.
	env := readEnv(t, filepath.Join(dir, "PIU-001", "bridge.env"))
	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=PIU", "--scenario=20:40", "--duration=40s", "--speed-up=2", "--start=2026-11-27T15:00:00Z")
	startBridge(t, bin, broker.URL(), "PIU-001", sim.devices["PIU-001"],
		"--mqtt-user", env["TRENZINHO_MQTT_USER"], "--mqtt-password", env["TRENZINHO_MQTT_PASSWORD"],
		"--key-file", filepath.Join(dir, "PIU-001", "bridge.key"), "--kid", env["TRENZINHO_KID"])

	// PIU-002's password without its key: forged and unsigned batches.
	env2 := readEnv(t, filepath.Join(dir, "PIU-002", "bridge.env"))
	o := mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("impostor").
		SetUsername("PIU-002").SetPassword(env2["TRENZINHO_MQTT_PASSWORD"])
	imp := mqtt.NewClient(o)
	if tok := imp.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("PIU-002's credential: %v", tok.Error())
	}
	t.Cleanup(func() { imp.Disconnect(100) })
	_, forger, _ := ed25519.GenerateKey(rand.Reader)
	at := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	const forged, unsigned = 5, 3
	for i := range forged + unsigned {
		speed := 45.0
		b := &wire.Batch{V: 1, Vehicle: "PIU-002", Epoch: "e-forged", Seq: uint64(i + 1), SentAt: wire.NewTime(at), Clock: wire.ClockGPS,
			GPS: []wire.GPS{{T: wire.NewTime(at.Add(time.Duration(i) * time.Second)), Lat: -20.8367, Lon: -40.7292, SpeedKmh: &speed, Fix: wire.Fix3D}}}
		key := forger
		if i >= forged {
			key = nil
		} else {
			b.Kid = env2["TRENZINHO_KID"] // the registered name, the wrong key
		}
		p, err := wire.Encode(b, key)
		if err != nil {
			t.Fatal(err)
		}
		if tok := imp.Publish(wire.TelemetryTopic("PIU-002"), 1, false, p); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}

	base := mon.client.base
	testenv.WaitFor(t, "PIU-001's signed batches judged and PIU-002's refused", 2*time.Minute, func() bool {
		return scrapeMetric(t, base, `trenzinho_monitor_batches_total{outcome="judged"}`) >= 5 &&
			scrapeMetric(t, base, `trenzinho_monitor_rejected_total{reason="signature_failed"}`) >= forged &&
			scrapeMetric(t, base, `trenzinho_monitor_rejected_total{reason="unsigned"}`) >= unsigned
	})
	var vehicles struct {
		Items []struct {
			ID  string
			Lat *float64
		}
	}
	mon.client.get(t, "/api/v1/vehicles", &vehicles)
	if len(vehicles.Items) != 1 || vehicles.Items[0].ID != "PIU-001" || vehicles.Items[0].Lat == nil {
		t.Errorf("vehicles %+v, want PIU-001 alone, with a position", vehicles.Items)
	}
	if n := scrapeMetric(t, base, `trenzinho_monitor_rejected_total{reason="signature_failed"}`); n != forged {
		t.Errorf("signature_failed %v, want %d (PIU-001's own batches all verify)", n, forged)
	}
	if n := strings.Count(mon.Log(), "batch refused by the signing policy"); n != 1 {
		t.Errorf("%d log lines for PIU-002's refused batches, want 1 per vehicle per minute", n)
	}
}
