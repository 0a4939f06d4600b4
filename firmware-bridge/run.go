package main

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/firmware-bridge/bridge"
	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/firmware-bridge/sdnotify"
	"github.com/trenzinho/trenzinho/firmware-bridge/serialport"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
	"github.com/trenzinho/trenzinho/wire"
)

// deviceFlags are the settings of the three instruments, shared by run and probe.
type deviceFlags struct {
	gpsPort, tachoPort, slmPort string
	gpsBaud, tachoBaud, slmBaud int
	tachoLayout, slmProtocol    string
	slmOffsetDB                 float64
	slmAddress, slmRegister     int
	slmDivisor                  float64
}

func (d *deviceFlags) bind(b *config.Binder) {
	b.String(&d.gpsPort, "TRENZINHO_GPS_PORT", "", "GPS receiver serial port (empty: none)")
	b.Int(&d.gpsBaud, "TRENZINHO_GPS_BAUD", 9600, "GPS receiver baud rate")
	b.String(&d.tachoPort, "TRENZINHO_TACHO_PORT", "", "tachograph D8 serial port (empty: none)")
	b.String(&d.tachoLayout, "TRENZINHO_TACHO_LAYOUT", "vdo", "tachograph D8 layout: vdo or stoneridge")
	b.Int(&d.tachoBaud, "TRENZINHO_TACHO_BAUD", 0, "tachograph baud rate (0: the layout's, 10400 VDO, 1200 Stoneridge)")
	b.String(&d.slmPort, "TRENZINHO_SLM_PORT", "", "sound-level meter serial port (empty: none)")
	b.String(&d.slmProtocol, "TRENZINHO_SLM_PROTOCOL", "pce322a", "sound-level meter protocol: pce322a or modbus-rtu")
	b.Int(&d.slmBaud, "TRENZINHO_SLM_BAUD", 0, "sound-level meter baud rate (0: the protocol's, 115200 PCE, 4800 Modbus)")
	b.Float(&d.slmOffsetDB, "TRENZINHO_SLM_OFFSET_DB", 0, "sound-level meter calibration offset, dB")
	b.Int(&d.slmAddress, "TRENZINHO_SLM_ADDRESS", 1, "Modbus address of the meter")
	b.Int(&d.slmRegister, "TRENZINHO_SLM_REGISTER", 0, "Modbus holding register of the level")
	b.Float(&d.slmDivisor, "TRENZINHO_SLM_DIVISOR", 10, "Modbus register value per dB: level = value / divisor")
}

func (d *deviceFlags) devices() (gps, tch, slmDev *bridge.Device, err error) {
	if d.gpsPort != "" {
		gps = &bridge.Device{Port: serialport.Config{Path: d.gpsPort, Baud: d.gpsBaud}}
	}
	if d.tachoPort != "" {
		layout, err := tacho.ParseLayout(d.tachoLayout)
		if err != nil {
			return nil, nil, nil, err
		}
		baud := d.tachoBaud
		if baud == 0 {
			baud = layout.Baud()
		}
		tch = &bridge.Device{Port: serialport.Config{Path: d.tachoPort, Baud: baud}, Protocol: string(layout)}
	}
	if d.slmPort != "" {
		baud := d.slmBaud
		if baud == 0 {
			baud = 115200
			if d.slmProtocol == "modbus-rtu" {
				baud = 4800
			}
		}
		slmDev = &bridge.Device{
			Port: serialport.Config{Path: d.slmPort, Baud: baud}, Protocol: d.slmProtocol,
			OffsetDB: d.slmOffsetDB, ModbusAddress: d.slmAddress, ModbusRegister: d.slmRegister, ModbusDivisor: d.slmDivisor,
		}
	}
	return gps, tch, slmDev, nil
}

func cmdRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	b := config.NewBinder(fs)
	var (
		cfg       bridge.Config
		dev       deviceFlags
		keyFile   string
		spoolMB   int
		metrics   string
		logLevel  string
		service   string
		activeLow bool
		door      string
		doorLow   bool
		configKey string
		coachF    coachFlags
	)
	b.BindMQTT(&cfg.MQTT)
	b.String(&cfg.Vehicle, "TRENZINHO_VEHICLE", "", "vehicle id ([A-Za-z0-9_-]{1,32}), required")
	b.String(&cfg.StateDir, "TRENZINHO_STATE_DIR", "/var/lib/trenzinho-bridge", "state directory: epoch, sequence and spool")
	dev.bind(b)
	b.Duration(&cfg.BatchInterval, "TRENZINHO_BATCH_INTERVAL", 5*time.Second, "how often a batch is closed and published")
	b.Int(&spoolMB, "TRENZINHO_SPOOL_MAX_MB", 512, "spool size bound in MiB; the oldest batches are evicted beyond it")
	b.String(&keyFile, "TRENZINHO_KEY_FILE", "", "ed25519 private key (PKCS #8 PEM) that signs every batch (empty: unsigned)")
	b.String(&cfg.Kid, "TRENZINHO_KID", "", "name of the signing key in the registry")
	b.Bool(&cfg.RTC, "TRENZINHO_RTC", false, "the Pi has a real-time clock (batches without GPS time say clock=rtc)")
	b.String(&metrics, "TRENZINHO_METRICS_LISTEN", "", "Prometheus metrics address (empty: off)")
	b.String(&service, "TRENZINHO_SERVICE_INPUT", "", "value file of the driver's service switch, e.g. /sys/class/gpio/gpio17/value (empty: not wired)")
	b.Bool(&activeLow, "TRENZINHO_SERVICE_ACTIVE_LOW", false, "the service switch reads 0 when on")
	b.String(&door, "TRENZINHO_DOOR_INPUT", "", "value file of the passenger door's contact, e.g. /sys/class/gpio/gpio27/value (empty: not wired)")
	b.Bool(&doorLow, "TRENZINHO_DOOR_ACTIVE_LOW", false, "the door contact reads 0 when the door is open")
	b.String(&logLevel, "TRENZINHO_LOG_LEVEL", "info", "log level: debug, info, warn, error (a configuration bundle may change it)")
	b.String(&configKey, "TRENZINHO_CONFIG_KEY", "", "the monitor's ed25519 public key (base64) that signs the configuration bundles, pinned at enrolment (empty: no configuration taken)")
	coachF.bind(b)
	if err := b.Parse(args); err != nil {
		return flagErr(err)
	}
	if err := coachF.check(); err != nil {
		return err
	}
	if _, err := config.Logger(io.Discard, logLevel); err != nil {
		return err // an unknown level
	}
	cfg.LogLevel = new(slog.LevelVar)
	_ = cfg.LogLevel.UnmarshalText([]byte(logLevel))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	cfg.Logger, cfg.Version = log, version
	var err error
	if configKey != "" {
		if cfg.ConfigKey, err = parsePublicKey(configKey); err != nil {
			return fmt.Errorf("run: TRENZINHO_CONFIG_KEY: %w", err)
		}
	}
	cfg.SpoolMaxBytes = int64(spoolMB) << 20
	if cfg.GPS, cfg.Tacho, cfg.SLM, err = dev.devices(); err != nil {
		return err
	}
	if service != "" {
		cfg.Service = &bridge.ServiceInput{Path: service, ActiveLow: activeLow}
	}
	if door != "" {
		cfg.Door = &bridge.DoorInput{Path: door, ActiveLow: doorLow}
	}
	if keyFile != "" {
		if cfg.Key, err = readKey(keyFile); err != nil {
			return err
		}
		if cfg.Kid == "" {
			return errors.New("run: --kid is required with --key-file")
		}
	}
	coachCtx, stopCoach := context.WithCancel(ctx)
	var br *bridge.Bridge
	co, coachDone, err := coachF.start(coachCtx, log, cfg.Vehicle, func(w coach.Warning) {
		// The warnings travel in the telemetry as evidence (docs/protocol.md §2.7): Warn closes
		// the open batch so that the warning is spooled at once. br is set before any reading
		// flows, and so before the coach can warn.
		if err := br.Warn(wireWarning(w)); err != nil {
			log.Warn("coach warning not queued", "kind", w.Kind, "err", err)
		}
	})
	if err != nil {
		stopCoach()
		return err
	}
	defer func() { stopCoach(); coachDone() }()
	if co != nil {
		cfg.Coach = co
	}
	if br, err = bridge.Open(cfg); err != nil {
		return err
	}
	if metrics != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		br.Register(reg)
		srv := &http.Server{Addr: metrics, Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server", "err", err)
			}
		}()
		defer srv.Close()
	}
	log.Info("bridge starting", "vehicle", cfg.Vehicle, "epoch", br.Epoch(), "version", version)
	// Under systemd (Type=notify, WatchdogSec=, packaging/deb/trenzinho-bridge.service): ready
	// once the spool is open, the watchdog fed while the bridge runs, stopping on a signal.
	if _, err := sdnotify.Notify(sdnotify.Ready); err != nil {
		log.Warn("sd_notify", "err", err)
	}
	go sdnotify.RunWatchdog(ctx, nil)
	stopping := context.AfterFunc(ctx, func() { _, _ = sdnotify.Notify(sdnotify.Stopping) })
	defer stopping()
	return br.Run(ctx)
}

func readKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("signing key %s: not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key %s: not ed25519", path)
	}
	return ek, nil
}

// parsePublicKey decodes an ed25519 public key written in base64 (standard or URL alphabet,
// padded or not), as `monitor vehicle add` writes it.
func parsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	k, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		if k, err = base64.RawURLEncoding.DecodeString(s); err != nil {
			return nil, errors.New("not base64")
		}
	}
	if len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%d bytes, want %d", len(k), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(k), nil
}

// wireWarning is the coach's warning as it travels in a batch: the distance only for a warning
// about a site, the value and limit always (the coach sets both for every kind).
func wireWarning(w coach.Warning) wire.Warning {
	out := wire.Warning{T: wire.NewTime(w.T), Kind: wire.WarningKind(w.Kind), Rule: w.Rule, Site: w.Site}
	if w.Site != "" {
		d := w.DistanceM
		out.DistanceM = &d
	}
	v, l := w.Value, w.Limit
	out.Value, out.Limit = &v, &l
	return out
}
