package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// simulateArgs are the arguments of `firmware-bridge simulate` for this run: the one place
// that says what the simulated fleet plays.
func (r *runner) simulateArgs() []string {
	return []string{"simulate", "--scenario", "demo", "--start", r.o.demo.Start,
		"--dir", filepath.Join(r.o.data, "sim")}
}

// startFleet starts the simulated fleet, which opens a pseudo-terminal per instrument and
// prints one JSON line per vehicle with their paths, and then a firmware bridge per vehicle
// reading them. env is added to the bridges' environment (the broker's URL).
func (r *runner) startFleet(ctx context.Context, env []string) error {
	pr, pw := io.Pipe()
	sim, err := r.sup.startWith("simulate", nil, pw,
		append([]string{filepath.Join(r.o.bin, "firmware-bridge")}, r.simulateArgs()...)...)
	if err != nil {
		return err
	}
	r.fleet = append(r.fleet, sim)
	go func() { <-sim.done; pw.Close() }()

	devices := make(chan []map[string]string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		var devs []map[string]string
		for len(devs) < r.o.vehicles && sc.Scan() {
			var d map[string]string
			if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
				r.log.Error("simulate printed something else than a vehicle's devices", "line", sc.Text())
				continue
			}
			devs = append(devs, d)
		}
		devices <- devs
		io.Copy(io.Discard, pr) // the simulator's later output is not needed
	}()
	var devs []map[string]string
	select {
	case devs = <-devices:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
	}
	if len(devs) < r.o.vehicles {
		return fmt.Errorf("simulate did not start its %d vehicles; see %s", r.o.vehicles, sim.logPath)
	}
	// The driver's coach: the bridges pin the monitor's key, as `monitor vehicle add` does on a
	// Pi, so that they apply the configuration bundles it publishes; each serves its local
	// status page on a port of its own.
	keyPath := os.Getenv("TRENZINHO_SIGNING_KEY") // the monitor inherits the environment
	if keyPath == "" {
		keyPath = filepath.Join(r.o.data, "monitor-signing.key") // beside its database
	}
	configKey, err := monitorConfigKey(keyPath)
	if err != nil {
		r.log.Warn("the bridges pin no configuration key: their coaches stay idle", "error", err)
	}
	for i, d := range devs {
		id := d["vehicle"]
		args := []string{filepath.Join(r.o.bin, "firmware-bridge"), "run",
			"--vehicle", id, "--state-dir", filepath.Join(r.o.data, "bridges", id),
			"--gps-port", d["gps"], "--tacho-port", d["tacho"], "--slm-port", d["slm"]}
		// The coach page's port is the bridge's to listen on: like the other children's, it is
		// checked to be the bridge's once started, and the bridge started again on another
		// free port when another process took it meanwhile (startOwned).
		var owned []*port
		page := &port{name: id + "'s coach page", def: coachPageBase + i, port: coachPageBase + i}
		if configKey != "" {
			args = append(args, "--config-key", configKey)
			owned = append(owned, page)
		}
		// The service switch and the passenger door, as value files the simulator sets (a
		// Pi's GPIOs).
		if d["service"] != "" {
			args = append(args, "--service-input", d["service"])
		}
		if d["door"] != "" {
			args = append(args, "--door-input", d["door"])
		}
		b, err := r.sup.startOwned(ctx, 3, owned, func() (*proc, error) {
			argv := args
			if len(owned) > 0 {
				argv = append(slices.Clip(args), "--coach-listen", page.addr())
			}
			return r.sup.startWith("bridge-"+id, env, nil, argv...)
		})
		if err != nil {
			return err
		}
		r.fleet = append(r.fleet, b)
		if len(owned) > 0 {
			r.coachPages = append(r.coachPages, id+" http://"+page.addr()+"/")
		}
	}
	r.log.Info("simulated fleet playing", "vehicles", r.o.vehicles)
	return nil
}

// coachPageBase is the port of the first train's coach status page; the others follow it.
const coachPageBase = 8091

// monitorConfigKey is the base64 public key of the monitor's signing key (PKCS #8 PEM, as the
// monitor writes it at its first start), as a bridge's TRENZINHO_CONFIG_KEY takes it.
func monitorConfigKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("monitor key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return "", fmt.Errorf("monitor key %s: not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return "", fmt.Errorf("monitor key %s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return "", fmt.Errorf("monitor key %s: not ed25519", path)
	}
	return base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)), nil
}
