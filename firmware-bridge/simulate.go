package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
)

// cmdSimulate opens pseudo-terminals for the instruments of n simulated vehicles, prints one JSON
// line per vehicle with the device paths a bridge should open, and plays the vehicles until it
// is stopped or --duration of device time has passed.
func cmdSimulate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	n := fs.Int("vehicles", 3, "number of simulated vehicles")
	prefix := fs.String("prefix", "PIU", "vehicle ids are PREFIX-001, PREFIX-002, …")
	dir := fs.String("dir", ".data/sim", "directory for the device symlinks (PIU-001-gps → /dev/pts/N)")
	speedUp := fs.Float64("speed-up", 1, "play device time this many times faster than real time")
	gpsHz := fs.Int("gps-hz", 1, "GPS fix rate: 1, 2, 5 or 10")
	speeders := fs.String("speeders", "2", "comma-separated vehicle numbers that speed now and then (45 km/h for 30 s)")
	scenario := fs.String("scenario", "", "a fixed scenario for every vehicle: SPEED_KMH:SECONDS[:DB[:INPUTS]],… (e.g. 20:10,45:30,20:60; INPUTS: off, door or off+door — the service switch off, the passenger door open; by default the switch is on and the door closed), or \"demo\": the scripted demonstration day of PIU-001…003 (README; --vehicles, --prefix, --speeders and --card do not apply)")
	inputs := fs.Bool("inputs", true, "write each vehicle's service switch and passenger door as GPIO value files (DIR/ID-service, DIR/ID-door) for the bridge's --service-input and --door-input")
	duration := fs.Duration("duration", 0, "stop after this much device time (0: until stopped)")
	tachoOn := fs.Bool("tacho", true, "simulate the tachograph (VDO D8, 10400 baud)")
	slmOn := fs.Bool("slm", true, "simulate the sound-level meter (PCE-322A style)")
	card := fs.String("card", "0000000086H101", "driver card number in the tachograph (empty: none)")
	start := fs.String("start", "", "device time of the first reading, RFC 3339 (default: now)")
	meterClock := fs.Bool("meter-clock", false, "set the sound-level meter's clock to device time, so that the bridge times its frames by it (needed with --speed-up above 1 or a past --start; always on for --scenario demo)")
	waitReaders := fs.Duration("wait-readers", 0, "before playing, wait up to this long until a reader (the bridge) has opened every device, so that no frame is written before it listens; the device time starts then (0: play at once)")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if *gpsHz != 1 && *gpsHz != 2 && *gpsHz != 5 && *gpsHz != 10 {
		return fmt.Errorf("simulate: --gps-hz %d: want 1, 2, 5 or 10", *gpsHz)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	if *start != "" {
		var err error
		if t0, err = time.Parse(time.RFC3339, *start); err != nil {
			return fmt.Errorf("simulate: --start: %w", err)
		}
	}
	var fixed sim.Scenario
	var demo []sim.DemoVehicle
	if *scenario == "demo" {
		demo = sim.Demo()
		*n = len(demo)
	} else if *scenario != "" {
		var err error
		if fixed, err = parseScenario(*scenario); err != nil {
			return err
		}
	}
	speeding := map[int]bool{}
	for _, s := range strings.Split(*speeders, ",") {
		if i, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			speeding[i] = true
		}
	}
	route := sim.PiumaLoop()
	type player struct {
		v    *sim.Vehicle
		out  sim.Outputs
		card string
	}
	var players []player
	var ptys []*sim.PTY
	defer func() {
		for _, p := range ptys {
			p.Close()
		}
	}()
	open := func(link string) (*sim.PTY, error) {
		p, err := sim.OpenPTY(link)
		if err == nil {
			ptys = append(ptys, p)
		}
		return p, err
	}
	enc := json.NewEncoder(os.Stdout)
	for i := 1; i <= *n; i++ {
		id := fmt.Sprintf("%s-%03d", *prefix, i)
		sc := sim.Cruise()
		if speeding[i] {
			sc = sim.Speeder()
		}
		if fixed != nil {
			sc = fixed
		}
		v := &sim.Vehicle{ID: id, Route: route, Scenario: sc, Offset: float64(i-1) * route.Length() / float64(*n)}
		vcard := *card
		if demo != nil {
			d := demo[i-1]
			v = &sim.Vehicle{ID: d.ID, Script: d.Script}
			id, vcard = d.ID, d.Card
		}
		line := map[string]string{"vehicle": id}
		var out sim.Outputs
		g, err := open(filepath.Join(*dir, id+"-gps"))
		if err != nil {
			return err
		}
		out.GPS, line["gps"] = g.Master, g.Path
		if *tachoOn {
			p, err := open(filepath.Join(*dir, id+"-tacho"))
			if err != nil {
				return err
			}
			out.Tacho, line["tacho"] = p.Master, p.Path
		}
		if *slmOn {
			p, err := open(filepath.Join(*dir, id+"-slm"))
			if err != nil {
				return err
			}
			out.SLM, line["slm"] = p.Master, p.Path
		}
		if *inputs {
			// The state at the start is in the files before the line is printed: a bridge started
			// from the line reads it at once.
			on, doorOpen := v.InputsAtStart()
			out.Service, out.Door = filepath.Join(*dir, id+"-service"), filepath.Join(*dir, id+"-door")
			if err := sim.WriteValue(out.Service, on); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			if err := sim.WriteValue(out.Door, doorOpen); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			line["service"], line["door"] = out.Service, out.Door
		}
		enc.Encode(line)
		players = append(players, player{v, out, vcard})
	}
	if *waitReaders > 0 {
		wctx, cancel := context.WithTimeout(ctx, *waitReaders)
		for _, p := range ptys {
			if err := p.WaitReader(wctx); err != nil {
				fmt.Fprintf(os.Stderr, "simulate: %s has no reader after %v; playing anyway\n", p.Path, *waitReaders)
				break
			}
		}
		cancel()
		if *start == "" {
			t0 = time.Now().UTC().Truncate(time.Second)
		}
	}
	var wg sync.WaitGroup
	for _, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _ := sim.Play(ctx, p.v, p.out, sim.PlayConfig{Start: t0, SpeedUp: *speedUp, GPSHz: *gpsHz, Duration: *duration, Card: p.card, MeterClock: demo != nil || *meterClock})
			b, _ := json.Marshal(map[string]any{"vehicle": p.v.ID, "gps_epochs": st.GPSEpochs, "tacho_frames": st.TachoFrames, "slm_frames": st.SLMFrames, "dropped_writes": st.Dropped})
			fmt.Fprintf(os.Stderr, "%s\n", b)
		}()
	}
	wg.Wait()
	// Give the readers a moment to drain the pseudo-terminals before they close.
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
	return nil
}

// parseScenario reads "20:10,45:30:72,20:60,0:40:65:door,45:30:65:off": speed km/h, seconds,
// optional dB, optional inputs (off: the service switch off; door: the passenger door open;
// both: off+door).
func parseScenario(s string) (sim.Scenario, error) {
	var sc sim.Scenario
	for _, part := range strings.Split(s, ",") {
		f := strings.Split(strings.TrimSpace(part), ":")
		if len(f) < 2 || len(f) > 4 {
			return nil, fmt.Errorf("simulate: scenario segment %q: want SPEED:SECONDS[:DB[:INPUTS]]", part)
		}
		var off, door bool
		if len(f) == 4 {
			for _, in := range strings.Split(f[3], "+") {
				switch in {
				case "off":
					off = true
				case "door":
					door = true
				default:
					return nil, fmt.Errorf("simulate: scenario segment %q: inputs %q: want off, door or off+door", part, f[3])
				}
			}
		}
		kmh, err1 := strconv.ParseFloat(f[0], 64)
		secs, err2 := strconv.ParseFloat(f[1], 64)
		db := 65.0
		var err3 error
		if len(f) >= 3 {
			db, err3 = strconv.ParseFloat(f[2], 64)
		}
		if err1 != nil || err2 != nil || err3 != nil || kmh < 0 || secs <= 0 {
			return nil, fmt.Errorf("simulate: scenario segment %q: want SPEED:SECONDS[:DB[:INPUTS]]", part)
		}
		sc = append(sc, sim.Segment{Duration: time.Duration(secs * float64(time.Second)), SpeedKmh: kmh, LAeqDB: db,
			ServiceOff: off, DoorOpen: door})
	}
	return sc, nil
}
