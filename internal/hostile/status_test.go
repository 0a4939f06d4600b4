package hostile

import (
	"bufio"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// TestStatusObeysSignaturePolicy (defect 6): with signatures required, a status message obeys
// the policy of the batches. Before, any status created a vehicle and set its devices unsigned.
// Now an unsigned status is refused, a signed one is taken, the unsigned MQTT will only marks
// the vehicle offline, and a status of a vehicle that is not registered leaves nothing behind.
func TestStatusObeysSignaturePolicy(t *testing.T) {
	bin := testenv.Build(t)
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(reg, []byte("licensees:\n  - id: L1\n    razao_social: Trenzinho Alegria da Orla Ltda\n    cnpj: 11.222.333/0001-81\n"+
		"vehicles:\n  - id: PIU-001\n    plate: ABC1D23\n    licensee: L1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "monitor"), "vehicle", "add", "--registry", reg, "--passwd", filepath.Join(dir, "passwd"),
		"--acl", filepath.Join(dir, "acl"), "--out", filepath.Join(dir, "PIU-001"), "PIU-001").CombinedOutput()
	if err != nil {
		t.Fatalf("monitor vehicle add: %v\n%s", err, out)
	}
	kid, key := bridgeKey(t, filepath.Join(dir, "PIU-001"))
	prof, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "profiles", "piuma.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	signed := strings.Replace(string(prof), "\nsignatures_required: false", "\nsignatures_required: true", 1)
	profPath := filepath.Join(dir, "piuma-signed.yaml")
	if err := os.WriteFile(profPath, []byte(signed), 0o644); err != nil {
		t.Fatal(err)
	}
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL(), "", "TRENZINHO_REGISTRY="+reg, "TRENZINHO_PROFILE="+profPath)
	pub := newPublisher(t, broker.URL(), "status")
	devices := func() (map[string]string, bool) {
		var fleet struct {
			Items []struct {
				ID      string
				Devices map[string]string
			}
		}
		mon.get(t, "/api/v1/vehicles", &fleet)
		if len(fleet.Items) == 0 {
			return nil, false
		}
		return fleet.Items[0].Devices, true
	}

	forged := `{"online":true,"version":"6.6","devices":{"gps":"ok","tacho":"ok","slm":"ok"}}`
	pub.publish(t, wire.StatusTopic("PIU-001"), []byte(forged))
	pub.publish(t, wire.StatusTopic("FAKE-1"), []byte(forged))
	testenv.WaitFor(t, "the unsigned status refused", 30*time.Second, func() bool {
		m := mon.metrics(t)
		return m[`trenzinho_monitor_rejected_total{reason="unsigned"}`] == 1 && m[`trenzinho_monitor_rejected_total{reason="unknown_vehicle"}`] == 1
	})
	if d, ok := devices(); ok && d != nil {
		t.Errorf("an unsigned status set the devices %v", d)
	}

	st := wire.Status{Online: true, Version: "1.2.0", Devices: map[string]string{"gps": "ok", "tacho": "missing"}, Kid: kid}
	p, err := wire.EncodeStatus(&st, key)
	if err != nil {
		t.Fatal(err)
	}
	pub.publish(t, wire.StatusTopic("PIU-001"), p)
	testenv.WaitFor(t, "the signed status taken", 30*time.Second, func() bool {
		d, _ := devices()
		return d["tacho"] == "missing"
	})
	pub.publish(t, wire.StatusTopic("PIU-001"), []byte(`{"online":false}`)) // the will, unsigned
	testenv.WaitFor(t, "the will taken", 30*time.Second, func() bool {
		m := mon.metrics(t)
		return m[`trenzinho_monitor_rejected_total{reason="unsigned"}`] == 1 && m[`trenzinho_monitor_vehicle_online{vehicle="PIU-001"}`] == 0
	})
	if d, _ := devices(); d["tacho"] != "missing" {
		t.Errorf("the will changed the devices: %v", d)
	}
	if fleet := mon.vehicles(t); len(fleet) != 1 || !fleet["PIU-001"] {
		t.Errorf("fleet %v, want PIU-001 only", fleet)
	}
}

// bridgeKey reads the kid and private key that `monitor vehicle add` wrote for a Pi.
func bridgeKey(t *testing.T, dir string) (string, ed25519.PrivateKey) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "bridge.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kid := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "TRENZINHO_KID="); ok {
			kid = v
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "bridge.key"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("bridge.key: not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return kid, k.(ed25519.PrivateKey)
}
