package bridge

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/gps"
	"github.com/trenzinho/trenzinho/firmware-bridge/serialport"
	"github.com/trenzinho/trenzinho/firmware-bridge/slm"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
	"github.com/trenzinho/trenzinho/wire"
)

// Device configures one serial instrument.
type Device struct {
	Port serialport.Config
	// Protocol is the tachograph layout (vdo, stoneridge) or the meter protocol
	// (pce322a, modbus-rtu); unused for GPS.
	Protocol string
	// OffsetDB is the meter's calibration offset, added to every level.
	OffsetDB float64
	// Modbus meters: address, holding register and divisor (level = value / divisor).
	ModbusAddress  int
	ModbusRegister int
	ModbusDivisor  float64
}

// reading is what a device hands to the batcher: exactly one field set.
type reading struct {
	GPS     *wire.GPS
	Tacho   *wire.Tacho
	Sound   *wire.Sound
	Service *wire.Service
	Door    *wire.Door
	// Warning is a warning of the driver's coach (Warn): not a reading, it closes its batch.
	Warning *wire.Warning
	// needsTime: the instrument gave no time; the batcher times it by the bridge's clock.
	needsTime bool
	received  time.Time
}

// deliver hands r to the batcher. It gives up only when ctx is done and the channel is full:
// a reading that can still be handed over is never dropped because the bridge is stopping
// (a select on both would pick either at random).
func deliver(ctx context.Context, out chan<- reading, r reading) error {
	select {
	case out <- r:
		return nil
	default:
	}
	select {
	case out <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deviceState is a device's health for the status message.
type deviceState struct {
	mu     sync.Mutex
	states map[string]string
}

func (d *deviceState) set(name, state string) (changed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.states[name] == state {
		return false
	}
	d.states[name] = state
	return true
}

func (d *deviceState) snapshot() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]string, len(d.states))
	for k, v := range d.states {
		out[k] = v
	}
	return out
}

// portLoop opens a port, hands it to read until read fails, and reopens it with exponential
// backoff (1 s to 30 s) — a USB adapter unplugged and plugged back in is picked up again
// without restarting the process.
func portLoop(ctx context.Context, log *slog.Logger, name string, cfg serialport.Config, st *deviceState, onChange func(), read func(io.ReadWriter) error) {
	// Reads return after readTimeout without data, so that a silent device neither keeps the
	// loop from seeing ctx nor holds back the last complete reading.
	cfg.ReadTimeout = readTimeout
	backoff := time.Second
	var failing openFailure
	for ctx.Err() == nil {
		p, err := serialport.Open(cfg)
		if err != nil {
			// Logged at start and whenever the failure changes (missing → permission denied),
			// not on every retry; the status's state is "missing" from the start, so it cannot
			// tell.
			if failing.changed(err) {
				log.Warn("device missing: port does not open; retrying", "device", name, "port", cfg.Path, "err", err)
			} else {
				log.Debug("port still does not open; retrying", "device", name, "port", cfg.Path, "in", backoff)
			}
			if st.set(name, wire.DeviceMissing) {
				onChange()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		log.Info("device open", "device", name, "port", cfg.Path, "baud", cfg.Baud)
		failing.reset()
		backoff = time.Second
		err = read(&idleReader{ctx: ctx, rw: p})
		p.Close()
		if ctx.Err() != nil {
			return
		}
		if st.set(name, wire.DeviceMissing) {
			onChange()
		}
		log.Warn("device lost; reopening", "device", name, "port", cfg.Path, "err", err)
	}
}

// openFailure remembers the last failure to open a port that was logged.
type openFailure struct{ last string }

// changed reports whether err differs from the last failure logged (none after reset), and
// remembers it.
func (f *openFailure) changed(err error) bool {
	msg := err.Error()
	if msg == f.last {
		return false
	}
	f.last = msg
	return true
}

// reset forgets the failure: the port opened.
func (f *openFailure) reset() { f.last = "" }

// readTimeout is how long a serial read waits for data.
const readTimeout = time.Second

// idleReader turns the port's read timeouts into calls of onIdle and ends reads when ctx is
// done, so that the readers above it (bufio.Scanner) never see an empty read.
type idleReader struct {
	ctx    context.Context
	rw     io.ReadWriter
	onIdle func()
}

func (r *idleReader) Read(p []byte) (int, error) {
	for {
		if err := r.ctx.Err(); err != nil {
			return 0, err
		}
		n, err := r.rw.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
		if r.onIdle != nil {
			r.onIdle()
		}
	}
}

func (r *idleReader) Write(p []byte) (int, error) { return r.rw.Write(p) }

// readGPS decodes NMEA lines into position epochs. An epoch is complete when the next one
// starts or, for the last one, when the receiver falls silent for readTimeout; in both cases it
// is handed over at once. Its receive time, which sets the clock's offset, is when its last
// sentence was read, not when the next epoch or the silence showed it complete: the offset then
// holds only the sentence latency, not a whole epoch period.
func readGPS(ctx context.Context, r io.Reader, out chan<- reading, st *deviceState, onChange func()) error {
	dec := &gps.Decoder{}
	var lastLine, lastFix time.Time // when the last line was read; when the last fix was handed over
	send := func(fixes []wire.GPS, now time.Time) error {
		if len(fixes) == 0 {
			return nil
		}
		received := lastLine
		if received.IsZero() {
			received = now
		}
		lastFix = now
		if st.set("gps", wire.DeviceOK) {
			onChange()
		}
		for i := range fixes {
			if err := deliver(ctx, out, reading{GPS: &fixes[i], received: received}); err != nil {
				return err
			}
		}
		return nil
	}
	if ir, ok := r.(*idleReader); ok {
		// Called from within sc.Scan below, on this goroutine. An error (ctx done and the
		// batcher full) ends the read right after: idleReader checks ctx next.
		ir.onIdle = func() { _ = send(dec.Flush(), time.Now()) }
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	sc.Split(gps.ScanLines)
	for sc.Scan() {
		now := time.Now()
		fixes := dec.Line(sc.Bytes())
		if err := send(fixes, now); err != nil {
			return err
		}
		lastLine = now
		if len(fixes) == 0 && (lastFix.IsZero() || now.Sub(lastFix) > 10*time.Second) {
			if st.set("gps", wire.DeviceNoFix) {
				onChange()
			}
		}
	}
	if err := send(dec.Flush(), time.Now()); err != nil {
		return err
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// readTacho decodes D8 frames.
func readTacho(ctx context.Context, r io.Reader, layout tacho.Layout, out chan<- reading, st *deviceState, onChange func()) error {
	dec, err := tacho.NewDecoder(layout)
	if err != nil {
		return err
	}
	buf := make([]byte, 1024)
	for {
		n, err := r.Read(buf)
		now := time.Now()
		for _, rd := range dec.Feed(buf[:n]) {
			t := rd.Tacho
			if st.set("tacho", wire.DeviceOK) {
				onChange()
			}
			if err := deliver(ctx, out, reading{Tacho: &t, needsTime: !rd.TimeValid, received: now}); err != nil {
				return err
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// readPCE reads a streaming meter and aggregates its samples to 1 s readings. The second in
// progress is handed over when the meter falls silent for readTimeout (no later sample can
// fall in it then) and when the port fails or the bridge stops, so that the last second of a
// meter is not lost with its port.
func readPCE(ctx context.Context, rw io.ReadWriter, d *Device, clock *clockState, out chan<- reading, st *deviceState, onChange func()) error {
	if err := slm.StartPCE(rw); err != nil {
		return err
	}
	dec := slm.NewPCEDecoder(time.UTC)
	agg, err := slm.NewAggregator(slm.DefaultRate, d.OffsetDB)
	if err != nil {
		return err
	}
	send := func(rs []wire.Sound, received time.Time) error {
		for i := range rs {
			if st.set("slm", wire.DeviceOK) {
				onChange()
			}
			if err := deliver(ctx, out, reading{Sound: &rs[i], received: received}); err != nil {
				return err
			}
		}
		return nil
	}
	if ir, ok := rw.(*idleReader); ok {
		// Called from within rw.Read below, on this goroutine. An error (ctx done and the
		// batcher full) ends the read right after: idleReader checks ctx next.
		ir.onIdle = func() {
			if r, ok := agg.Flush(); ok {
				_ = send([]wire.Sound{r}, time.Now())
			}
		}
	}
	buf := make([]byte, 512)
	for {
		n, err := rw.Read(buf)
		received := time.Now()
		now := clock.at(received)
		var ready []wire.Sound
		for _, f := range dec.Feed(buf[:n]) {
			t := now
			if !f.Time.IsZero() {
				t = f.Time
			}
			if r, ok := agg.Add(slm.Sample{T: t, DB: float64(f.DeciDB) / 10}); ok {
				ready = append(ready, r)
			}
		}
		if err != nil {
			if r, ok := agg.Flush(); ok {
				ready = append(ready, r)
			}
		}
		if serr := send(ready, received); serr != nil {
			return serr
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// modbusLoop polls a Modbus RTU meter, reopening its port with backoff when it fails.
// simonvetter/modbus opens the port itself (through goburrow/serial), not through serialport.
func modbusLoop(ctx context.Context, log *slog.Logger, d *Device, clock *clockState, out chan<- reading, st *deviceState, onChange func()) {
	backoff := time.Second
	var failing openFailure
	for ctx.Err() == nil {
		p, err := slm.OpenPoller(slm.ModbusConfig{
			Device: d.Port.Path, Baud: d.Port.Baud, Parity: d.Port.Parity, StopBits: d.Port.StopBits,
			Address: uint8(d.ModbusAddress), Register: uint16(d.ModbusRegister), Divisor: d.ModbusDivisor,
		})
		if err == nil {
			var agg *slm.Aggregator
			agg, err = slm.NewAggregator(slm.DefaultRate, d.OffsetDB)
			if err == nil {
				log.Info("device open", "device", "slm", "port", d.Port.Path, "protocol", "modbus-rtu")
				failing.reset()
				backoff = time.Second
				emit := func(r wire.Sound) {
					if st.set("slm", wire.DeviceOK) {
						onChange()
					}
					_ = deliver(ctx, out, reading{Sound: &r, received: time.Now()})
				}
				err = p.Run(ctx, clock.now, func(s slm.Sample) {
					if r, ok := agg.Add(s); ok {
						emit(r)
					}
				})
				// The second in progress when polling stopped.
				if r, ok := agg.Flush(); ok {
					emit(r)
				}
			}
			p.Close()
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil && failing.changed(err) {
			log.Warn("device missing: port does not open or the meter does not answer; retrying", "device", "slm", "port", d.Port.Path, "err", err)
		}
		if st.set("slm", wire.DeviceMissing) {
			onChange()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}
