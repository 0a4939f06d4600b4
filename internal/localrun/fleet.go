package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
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
	for _, d := range devs {
		id := d["vehicle"]
		args := []string{filepath.Join(r.o.bin, "firmware-bridge"), "run",
			"--vehicle", id, "--state-dir", filepath.Join(r.o.data, "bridges", id),
			"--gps-port", d["gps"], "--tacho-port", d["tacho"], "--slm-port", d["slm"]}
		// The service switch and the passenger door, as value files the simulator sets (a
		// Pi's GPIOs).
		if d["service"] != "" {
			args = append(args, "--service-input", d["service"])
		}
		if d["door"] != "" {
			args = append(args, "--door-input", d["door"])
		}
		b, err := r.sup.start("bridge-"+id, env, args...)
		if err != nil {
			return err
		}
		r.fleet = append(r.fleet, b)
	}
	r.log.Info("simulated fleet playing", "vehicles", r.o.vehicles)
	return nil
}
