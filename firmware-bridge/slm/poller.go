package slm

import (
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"sync/atomic"
	"time"

	"github.com/simonvetter/modbus"
)

// ModbusConfig configures a Modbus RTU noise transmitter. Zero fields take the defaults.
type ModbusConfig struct {
	// Device is the serial device, e.g. /dev/ttyUSB0. Required.
	Device string
	// Baud is the serial rate; default 4800.
	Baud int
	// Parity is "N" (default), "E" or "O"; StopBits 1 (default) or 2. Data bits are 8.
	Parity   string
	StopBits int
	// Address is the meter's Modbus address; default 1.
	Address uint8
	// Register is the holding register of the level; default 0.
	Register uint16
	// Divisor turns the register into dB: level = value / Divisor; default 10.
	Divisor float64
	// Rate is how many samples a second the Poller takes; default 10.
	Rate float64
	// Timeout bounds one request; default 300 ms.
	Timeout time.Duration
	// MaxFailures is how many polls in a row may fail before Run gives up and returns
	// (the meter is then missing: reopen it later); default 50, five seconds at 10 Hz.
	// A negative value never gives up.
	MaxFailures int
	// Logger receives the Modbus library's messages; they are discarded when nil.
	Logger *log.Logger
}

// Defaults of ModbusConfig.
const (
	DefaultModbusBaud    = 4800
	DefaultModbusAddress = 1
	DefaultDivisor       = 10.0
	DefaultModbusTimeout = 300 * time.Millisecond
	DefaultMaxFailures   = 50
)

// withDefaults returns c with its zero fields set to the defaults, or an error naming the
// first invalid field.
func (c ModbusConfig) withDefaults() (ModbusConfig, error) {
	if c.Device == "" {
		return c, fmt.Errorf("slm: modbus: no device")
	}
	if c.Baud == 0 {
		c.Baud = DefaultModbusBaud
	}
	if c.Parity == "" {
		c.Parity = "N"
	}
	if c.StopBits == 0 {
		c.StopBits = 1
	}
	if c.Address == 0 {
		c.Address = DefaultModbusAddress
	}
	if c.Divisor == 0 {
		c.Divisor = DefaultDivisor
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultModbusTimeout
	}
	if c.MaxFailures == 0 {
		c.MaxFailures = DefaultMaxFailures
	}
	switch {
	case c.Baud < 0:
		return c, fmt.Errorf("slm: modbus: baud %d", c.Baud)
	case c.Parity != "N" && c.Parity != "E" && c.Parity != "O":
		return c, fmt.Errorf("slm: modbus: parity %q: want N, E or O", c.Parity)
	case c.StopBits != 1 && c.StopBits != 2:
		return c, fmt.Errorf("slm: modbus: %d stop bits: want 1 or 2", c.StopBits)
	case c.Address > 247:
		return c, fmt.Errorf("slm: modbus: address %d: want 1–247", c.Address)
	case !(c.Divisor > 0) || math.IsInf(c.Divisor, 0):
		return c, fmt.Errorf("slm: modbus: divisor %v: want a positive number", c.Divisor)
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0):
		return c, fmt.Errorf("slm: modbus: rate %v: want a positive number", c.Rate)
	case c.Timeout < 0:
		return c, fmt.Errorf("slm: modbus: timeout %v", c.Timeout)
	}
	return c, nil
}

// PollStats counts a Poller's requests.
type PollStats struct {
	Polls  int64 `json:"polls"`  // requests answered with a level
	Errors int64 `json:"errors"` // requests that failed: timeout, CRC, exception, I/O
}

// A Poller reads a Modbus RTU noise transmitter. Read and Run must not be called
// concurrently; Stats may be called at any time.
type Poller struct {
	cfg    ModbusConfig
	client *modbus.ModbusClient
	polls  atomic.Int64
	errs   atomic.Int64
}

// OpenPoller opens the meter's serial port.
func OpenPoller(cfg ModbusConfig) (*Poller, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	parity := map[string]uint{"N": modbus.PARITY_NONE, "E": modbus.PARITY_EVEN, "O": modbus.PARITY_ODD}[cfg.Parity]
	client, err := modbus.NewClient(&modbus.ClientConfiguration{
		URL:      "rtu://" + cfg.Device,
		Speed:    uint(cfg.Baud),
		DataBits: 8,
		Parity:   parity,
		StopBits: uint(cfg.StopBits),
		Timeout:  cfg.Timeout,
		Logger:   logger,
	})
	if err != nil {
		return nil, fmt.Errorf("slm: modbus: %s: %w", cfg.Device, err)
	}
	if err := client.Open(); err != nil {
		return nil, fmt.Errorf("slm: modbus: open %s: %w", cfg.Device, err)
	}
	if err := client.SetUnitId(cfg.Address); err != nil {
		client.Close()
		return nil, fmt.Errorf("slm: modbus: address %d: %w", cfg.Address, err)
	}
	return &Poller{cfg: cfg, client: client}, nil
}

// Read polls the meter once and returns its level in dB (before any offset).
func (p *Poller) Read() (float64, error) {
	db, err := p.read()
	if err != nil {
		return 0, fmt.Errorf("slm: modbus: %s address %d register %d: %w", p.cfg.Device, p.cfg.Address, p.cfg.Register, err)
	}
	return db, nil
}

// read is Read with the library's error unwrapped.
func (p *Poller) read() (float64, error) {
	v, err := p.client.ReadRegister(p.cfg.Register, modbus.HOLDING_REGISTER)
	if err != nil {
		p.errs.Add(1)
		return 0, err
	}
	p.polls.Add(1)
	return float64(v) / p.cfg.Divisor, nil
}

// Run polls the meter at the configured rate until ctx is done, and passes each level to
// emit with the time now returned when its poll started (time.Now when now is nil). A
// failed poll is counted and skipped (the aggregate then covers less than a second). Run
// returns ctx's error, or an error wrapping the last failure when MaxFailures polls in a
// row have failed.
func (p *Poller) Run(ctx context.Context, now func() time.Time, emit func(Sample)) error {
	if now == nil {
		now = time.Now
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / p.cfg.Rate))
	defer tick.Stop()
	failures := 0
	for ctx.Err() == nil {
		t := now()
		db, err := p.read()
		if err == nil {
			failures = 0
			emit(Sample{T: t, DB: db})
		} else if failures++; p.cfg.MaxFailures > 0 && failures >= p.cfg.MaxFailures {
			return fmt.Errorf("slm: modbus: %s address %d register %d: %d polls failed in a row, the last with: %w",
				p.cfg.Device, p.cfg.Address, p.cfg.Register, failures, err)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return ctx.Err()
}

// Stats returns the counters so far.
func (p *Poller) Stats() PollStats {
	return PollStats{Polls: p.polls.Load(), Errors: p.errs.Load()}
}

// Close closes the serial port.
func (p *Poller) Close() error {
	if err := p.client.Close(); err != nil {
		return fmt.Errorf("slm: modbus: close %s: %w", p.cfg.Device, err)
	}
	return nil
}
