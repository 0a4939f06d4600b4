// Package config binds the TRENZINHO_* environment settings (docs/operations.md, "Settings") to command-line flags.
// A flag has the name of its variable in kebab case without the prefix (TRENZINHO_MQTT_URL is
// --mqtt-url); the environment gives the default and a flag on the command line overrides it.
package config

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Prefix of every environment variable.
const Prefix = "TRENZINHO_"

// FlagName returns the flag name of an environment variable: TRENZINHO_MQTT_URL → mqtt-url.
func FlagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, Prefix)), "_", "-")
}

// Binder registers settings on a flag set with defaults from an environment.
type Binder struct {
	FS *flag.FlagSet
	// Lookup reads the environment; os.LookupEnv when nil.
	Lookup func(string) (string, bool)
	errs   []error
}

// NewBinder returns a Binder for fs reading the process environment.
func NewBinder(fs *flag.FlagSet) *Binder { return &Binder{FS: fs} }

func (b *Binder) lookup(env string) (string, bool) {
	if b.Lookup != nil {
		return b.Lookup(env)
	}
	return os.LookupEnv(env)
}

func usage(env, text string) string { return fmt.Sprintf("%s (env %s)", text, env) }

// String binds a string setting.
func (b *Binder) String(p *string, env, def, text string) {
	if v, ok := b.lookup(env); ok {
		def = v
	}
	b.FS.StringVar(p, FlagName(env), def, usage(env, text))
}

// Int binds an integer setting.
func (b *Binder) Int(p *int, env string, def int, text string) {
	if v, ok := b.lookup(env); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("%s=%q: not an integer", env, v))
		} else {
			def = n
		}
	}
	b.FS.IntVar(p, FlagName(env), def, usage(env, text))
}

// Duration binds a duration setting ("5s", "2m").
func (b *Binder) Duration(p *time.Duration, env string, def time.Duration, text string) {
	if v, ok := b.lookup(env); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("%s=%q: not a duration", env, v))
		} else {
			def = d
		}
	}
	b.FS.DurationVar(p, FlagName(env), def, usage(env, text))
}

// Bool binds a boolean setting.
func (b *Binder) Bool(p *bool, env string, def bool, text string) {
	if v, ok := b.lookup(env); ok {
		x, err := strconv.ParseBool(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("%s=%q: not a boolean", env, v))
		} else {
			def = x
		}
	}
	b.FS.BoolVar(p, FlagName(env), def, usage(env, text))
}

// Parse parses args and reports environment values that could not be read.
func (b *Binder) Parse(args []string) error {
	if err := b.FS.Parse(args); err != nil {
		return err
	}
	if len(b.errs) > 0 {
		return fmt.Errorf("config: %w", b.errs[0])
	}
	return nil
}

// MQTT are the broker settings every program reads.
type MQTT struct {
	URL      string
	User     string
	Password string
	// CAFile, CertFile and KeyFile configure TLS for ssl:// and tls:// URLs.
	CAFile   string
	CertFile string
	KeyFile  string
}

// BindMQTT binds the MQTT settings.
func (b *Binder) BindMQTT(m *MQTT) {
	b.String(&m.URL, "TRENZINHO_MQTT_URL", "tcp://127.0.0.1:1883", "MQTT broker URL (tcp://, ssl://)")
	b.String(&m.User, "TRENZINHO_MQTT_USER", "", "MQTT user name")
	b.String(&m.Password, "TRENZINHO_MQTT_PASSWORD", "", "MQTT password")
	b.String(&m.CAFile, "TRENZINHO_MQTT_CA", "", "CA certificate file for TLS to the broker")
	b.String(&m.CertFile, "TRENZINHO_MQTT_CERT", "", "client certificate file for TLS")
	b.String(&m.KeyFile, "TRENZINHO_MQTT_KEY", "", "client key file for TLS")
}

// Influx are the InfluxDB settings.
type Influx struct {
	URL    string
	Token  string
	Org    string
	Bucket string
}

// BindInflux binds the InfluxDB settings.
func (b *Binder) BindInflux(i *Influx) {
	b.String(&i.URL, "TRENZINHO_INFLUX_URL", "", "InfluxDB URL (empty: no InfluxDB)")
	b.String(&i.Token, "TRENZINHO_INFLUX_TOKEN", "", "InfluxDB token (1.8: user:password)")
	b.String(&i.Org, "TRENZINHO_INFLUX_ORG", "trenzinho", "InfluxDB organisation (ignored by 1.8)")
	b.String(&i.Bucket, "TRENZINHO_INFLUX_BUCKET", "trenzinho", "InfluxDB bucket (1.8: db or db/rp)")
}

// TLSConfig returns the TLS settings for the broker, or nil when none are configured.
func (m MQTT) TLSConfig() (*tls.Config, error) {
	if m.CAFile == "" && m.CertFile == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if m.CAFile != "" {
		pem, err := os.ReadFile(m.CAFile)
		if err != nil {
			return nil, fmt.Errorf("config: MQTT CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("config: MQTT CA %s: no certificate", m.CAFile)
		}
		c.RootCAs = pool
	}
	if m.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(m.CertFile, m.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("config: MQTT client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// Float binds a floating-point setting.
func (b *Binder) Float(p *float64, env string, def float64, text string) {
	if v, ok := b.lookup(env); ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("%s=%q: not a number", env, v))
		} else {
			def = x
		}
	}
	b.FS.Float64Var(p, FlagName(env), def, usage(env, text))
}

// Logger returns the text logger on w that every program uses, at the level named by
// TRENZINHO_LOG_LEVEL (debug, info, warn, error).
func Logger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("config: TRENZINHO_LOG_LEVEL=%q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// BindLimits binds the time window of valid batches (docs/protocol.md §3) that ingest and the
// monitor both read, so that the two accept exactly the same batches.
func (b *Binder) BindLimits(l *wire.Limits) {
	b.Duration(&l.MaxAge, "TRENZINHO_MAX_AGE", wire.DefaultMaxAge, "oldest reading taken, before its receipt (older: quarantined as past_time)")
	b.Duration(&l.MaxAhead, "TRENZINHO_MAX_AHEAD", wire.DefaultMaxAhead, "furthest reading taken ahead of its receipt, at most 24h (further: quarantined as future_time)")
}
