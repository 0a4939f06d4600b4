// Package notifyconfig reads the monitor's notifications file (TRENZINHO_NOTIFICATIONS): the
// channels' settings, the users' addresses and preferences, the on-duty schedule, and builds
// the notify.Dispatcher from it. Secrets never go in the file: the SMTP password, the bot token
// and the VAPID private key come from the environment (docs/operations.md, "Notifications").
package notifyconfig

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/email"
	"github.com/trenzinho/trenzinho/monitor/notify/telegram"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
)

// Environment variables of the secrets.
const (
	EnvSMTPPassword  = "TRENZINHO_SMTP_PASSWORD"
	EnvTelegramToken = "TRENZINHO_TELEGRAM_TOKEN"
	EnvVAPIDKey      = "TRENZINHO_VAPID_PRIVATE_KEY"
)

// File is the notifications file.
type File struct {
	// BaseURL is the dashboard's public address, for the links in messages.
	BaseURL  string `yaml:"base_url"`
	TimeZone string `yaml:"time_zone"` // America/Sao_Paulo when empty
	// Window, MaxAttempts, Backoff: see notify.Config.
	Window      time.Duration `yaml:"window"`
	MaxAttempts int           `yaml:"max_attempts"`
	Backoff     time.Duration `yaml:"backoff"`
	// Severity overrides notify.DefaultSeverity per rule: {parked_public_road: medium}.
	Severity map[string]string `yaml:"severity"`

	Email    *Email    `yaml:"email"`
	Telegram *Telegram `yaml:"telegram"`
	WebPush  *WebPush  `yaml:"webpush"`

	Users    []User  `yaml:"users"`
	Schedule []Shift `yaml:"schedule"`

	// Escalation re-sends an alert nobody acknowledged to the supervisors; nil: no escalation.
	Escalation *Escalation `yaml:"escalation"`
}

// Escalation is notify.Escalation as the file writes it:
//
//	escalation: {min_severity: high, after: 10m, to: [carlos], max_age: 12h}
type Escalation struct {
	MinSeverity string        `yaml:"min_severity"` // high when empty
	After       time.Duration `yaml:"after"`        // required, at least 1 minute
	To          []string      `yaml:"to"`           // user ids of the file; required
	MaxAge      time.Duration `yaml:"max_age"`      // 12h when zero
}

// Policy is the escalation policy the file sets (nil when it sets none).
func (f *File) Policy() *notify.Escalation {
	e := f.Escalation
	if e == nil {
		return nil
	}
	p := &notify.Escalation{MinSeverity: notify.High, After: e.After, To: e.To, MaxAge: e.MaxAge}
	if e.MinSeverity != "" {
		p.MinSeverity, _ = notify.ParseSeverity(e.MinSeverity)
	}
	return p
}

// Email is the SMTP account (password: TRENZINHO_SMTP_PASSWORD).
type Email struct {
	Addr     string `yaml:"addr"`     // host:port
	Security string `yaml:"security"` // starttls (default), tls, none
	Username string `yaml:"username"`
	From     string `yaml:"from"`
	// CAFile is a PEM file of the certificate authorities to trust for the server instead of
	// the system's (a municipal server with its own CA).
	CAFile string `yaml:"ca_file"`
}

// Telegram is the bot (token: TRENZINHO_TELEGRAM_TOKEN).
type Telegram struct {
	BaseURL string `yaml:"base_url"` // https://api.telegram.org when empty
}

// WebPush is the VAPID contact (private key: TRENZINHO_VAPID_PRIVATE_KEY).
type WebPush struct {
	Subject string `yaml:"subject"` // mailto:… or https://…
	// Hosts are the push services a subscription's endpoint may name (host suffixes);
	// webpush.DefaultHosts when empty. Whatever the list, only public addresses are dialled.
	Hosts []string `yaml:"hosts"`
}

// policy is the Web Push guard's policy the file sets.
func (w *WebPush) policy() webpush.Policy {
	var p webpush.Policy
	if len(w.Hosts) > 0 {
		p.Hosts = w.Hosts
	}
	return p
}

// WebPushKeys reads the VAPID key pair from the environment (TRENZINHO_VAPID_PRIVATE_KEY;
// getenv is os.Getenv when nil). Its public half is the applicationServerKey the dashboard
// subscribes with (Directory.VAPIDPublicKey).
func (f *File) WebPushKeys(getenv func(string) string) (webpush.Keys, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	keys, err := webpush.ParseKeys(getenv(EnvVAPIDKey))
	if err != nil {
		return keys, fmt.Errorf("notifications webpush (%s): %w", EnvVAPIDKey, err)
	}
	return keys, nil
}

// User is one person's addresses and preferences.
type User struct {
	ID          string   `yaml:"id"`
	Email       string   `yaml:"email"`
	Telegram    string   `yaml:"telegram"`
	WebPush     []string `yaml:"webpush"` // subscriptions (JSON); the dashboard stores more (Directory)
	Rules       []string `yaml:"rules"`
	Vehicles    []string `yaml:"vehicles"`
	Licensees   []string `yaml:"licensees"`
	MinSeverity string   `yaml:"min_severity"`
	Channels    []string `yaml:"channels"`
	QuietHours  string   `yaml:"quiet_hours"` // "22:00-07:00"
	OnDutyOnly  bool     `yaml:"on_duty_only"`
}

// Shift is a turn of the on-duty schedule, times in RFC 3339.
type Shift struct {
	User string    `yaml:"user"`
	From time.Time `yaml:"from"`
	To   time.Time `yaml:"to"`
}

// maxFile bounds the file: a municipality's inspectors and a year of shifts fit in far less.
const maxFile = 4 << 20

// Load reads and checks the file.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse reads and checks a file's content; name is for the errors.
func Parse(b []byte, name string) (*File, error) {
	if len(b) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxFile)
	}
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

var channelNames = []string{"email", "telegram", "webpush"}

func (f *File) check() error {
	var errs []error
	if f.TimeZone != "" {
		if _, err := time.LoadLocation(f.TimeZone); err != nil {
			errs = append(errs, fmt.Errorf("time_zone: %w", err))
		}
	}
	for rule, s := range f.Severity {
		if _, err := notify.ParseSeverity(s); err != nil {
			errs = append(errs, fmt.Errorf("severity.%s: %w", rule, err))
		}
	}
	ids := map[string]bool{}
	for i, u := range f.Users {
		at := fmt.Sprintf("users[%d]", i)
		if u.ID == "" {
			errs = append(errs, fmt.Errorf("%s: id missing", at))
		} else if ids[u.ID] {
			errs = append(errs, fmt.Errorf("%s: user %q twice", at, u.ID))
		}
		ids[u.ID] = true
		if u.MinSeverity != "" {
			if _, err := notify.ParseSeverity(u.MinSeverity); err != nil {
				errs = append(errs, fmt.Errorf("%s.min_severity: %w", at, err))
			}
		}
		if u.QuietHours != "" {
			if _, err := notify.ParseQuietHours(u.QuietHours); err != nil {
				errs = append(errs, fmt.Errorf("%s.quiet_hours: %w", at, err))
			}
		}
		for _, c := range u.Channels {
			if !slices.Contains(channelNames, c) {
				errs = append(errs, fmt.Errorf("%s.channels: %q is not one of %s", at, c, strings.Join(channelNames, ", ")))
			}
		}
		if u.Email != "" && f.Email == nil || u.Telegram != "" && f.Telegram == nil || len(u.WebPush) > 0 && f.WebPush == nil {
			errs = append(errs, fmt.Errorf("%s: an address of a channel the file does not configure", at))
		}
		for j, s := range u.WebPush {
			sub, _, _, err := webpush.ParseSubscription(s)
			if err == nil && f.WebPush != nil {
				err = f.WebPush.policy().CheckEndpoint(sub.Endpoint)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.webpush[%d]: %w", at, j, err))
			}
		}
	}
	for i, s := range f.Schedule {
		if !ids[s.User] {
			errs = append(errs, fmt.Errorf("schedule[%d]: user %q is not in users", i, s.User))
		}
		if !s.To.After(s.From) {
			errs = append(errs, fmt.Errorf("schedule[%d]: to is not after from", i))
		}
	}
	if e := f.Escalation; e != nil {
		if e.MinSeverity != "" {
			if _, err := notify.ParseSeverity(e.MinSeverity); err != nil {
				errs = append(errs, fmt.Errorf("escalation.min_severity: %w", err))
			}
		}
		if e.After < time.Minute {
			errs = append(errs, errors.New("escalation.after: at least 1m (e.g. 10m)"))
		}
		if e.MaxAge < 0 || e.MaxAge != 0 && e.MaxAge <= e.After {
			errs = append(errs, errors.New("escalation.max_age: longer than after"))
		}
		if len(e.To) == 0 {
			errs = append(errs, errors.New("escalation.to: name at least one user (the supervisors)"))
		}
		for _, u := range e.To {
			if !ids[u] {
				errs = append(errs, fmt.Errorf("escalation.to: user %q is not in users", u))
			}
		}
	}
	return errors.Join(errs...)
}

// Options are what Dispatcher needs besides the file.
type Options struct {
	Getenv     func(string) string // os.Getenv when nil
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	Clock      notify.Clock
	// DeadLetters keeps the dead letters across restarts (*store.DB); nil: in memory.
	DeadLetters notify.DeadLetterStore
	// PushGone is told of a Web Push subscription (its JSON) the push service no longer knows
	// (404, 410: webpush.ErrGone), after the failure is recorded; Directory.PushGone removes
	// it when the dashboard stored it. Nil: nothing is told.
	PushGone func(ctx context.Context, subscription string)
}

// goneHook is the Web Push channel that tells Options.PushGone of the subscriptions gone.
type goneHook struct {
	notify.Channel
	gone func(ctx context.Context, subscription string)
}

func (g goneHook) Send(ctx context.Context, to string, m notify.Message) error {
	err := g.Channel.Send(ctx, to, m)
	if errors.Is(err, webpush.ErrGone) {
		g.gone(ctx, to)
	}
	return err
}

// EmailSender builds the file's SMTP sender (nil, nil when the file configures no e-mail):
// the dispatcher's e-mail channel, and the answers to citizens' complaints. getenv reads
// TRENZINHO_SMTP_PASSWORD (os.Getenv when nil).
func (f *File) EmailSender(getenv func(string) string) (*email.Sender, error) {
	e := f.Email
	if e == nil {
		return nil, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	var tlsConf *tls.Config
	if e.CAFile != "" {
		pem, err := os.ReadFile(e.CAFile)
		if err != nil {
			return nil, fmt.Errorf("notifications email: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("notifications email: no certificate in %s", e.CAFile)
		}
		tlsConf = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	s, err := email.New(email.Config{Addr: e.Addr, Security: email.Security(e.Security), Username: e.Username,
		Password: getenv(EnvSMTPPassword), From: e.From, TLS: tlsConf})
	if err != nil {
		return nil, fmt.Errorf("notifications email: %w", err)
	}
	if e.Username != "" && getenv(EnvSMTPPassword) == "" {
		return nil, fmt.Errorf("notifications email: username set but %s empty", EnvSMTPPassword)
	}
	return s, nil
}

// Dispatcher builds the channels the file configures and the dispatcher. It also returns the
// severity of each rule, for notify.FromEpisode.
func (f *File) Dispatcher(o Options) (*notify.Dispatcher, func(rule string) notify.Severity, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	loc, err := time.LoadLocation(cmp.Or(f.TimeZone, "America/Sao_Paulo"))
	if err != nil {
		return nil, nil, err
	}
	chans := map[string]notify.Channel{}
	if f.Email != nil {
		s, err := f.EmailSender(getenv)
		if err != nil {
			return nil, nil, err
		}
		chans["email"] = s
	}
	if t := f.Telegram; t != nil {
		tok := getenv(EnvTelegramToken)
		if tok == "" {
			return nil, nil, fmt.Errorf("notifications telegram: %s empty", EnvTelegramToken)
		}
		chans["telegram"] = &telegram.Client{BaseURL: t.BaseURL, Token: tok}
	}
	if w := f.WebPush; w != nil {
		keys, err := f.WebPushKeys(getenv)
		if err != nil {
			return nil, nil, err
		}
		if !strings.HasPrefix(w.Subject, "mailto:") && !strings.HasPrefix(w.Subject, "https://") {
			return nil, nil, errors.New("notifications webpush: subject must be mailto: or https://")
		}
		chans["webpush"] = &webpush.Sender{Keys: keys, Subject: w.Subject, Policy: w.policy()}
		if o.PushGone != nil {
			chans["webpush"] = goneHook{Channel: chans["webpush"], gone: o.PushGone}
		}
	}
	users := make([]notify.User, 0, len(f.Users))
	for _, u := range f.Users {
		users = append(users, u.notifyUser())
	}
	sched := make(notify.Schedule, 0, len(f.Schedule))
	for _, s := range f.Schedule {
		sched = append(sched, notify.Shift{User: s.User, From: s.From, To: s.To})
	}
	d, err := notify.New(notify.Config{
		Channels: chans, Users: users, Schedule: sched, Clock: o.Clock,
		Composer: notify.Composer{BaseURL: f.BaseURL, Location: loc},
		Window:   f.Window, MaxAttempts: f.MaxAttempts, Backoff: f.Backoff,
		Registerer: o.Registerer, Logger: o.Logger, DeadLetterStore: o.DeadLetters,
	})
	if err != nil {
		return nil, nil, err
	}
	overrides := map[string]notify.Severity{}
	for rule, s := range f.Severity {
		overrides[rule], _ = notify.ParseSeverity(s)
	}
	severity := func(rule string) notify.Severity {
		if s, ok := overrides[rule]; ok {
			return s
		}
		return notify.DefaultSeverity(rule)
	}
	return d, severity, nil
}

// notifyUser is the notify.User of a file's entry (checked by Parse).
func (u User) notifyUser() notify.User {
	nu := notify.User{ID: u.ID, Prefs: notify.Preferences{Rules: u.Rules, Vehicles: u.Vehicles, Licensees: u.Licensees,
		Channels: u.Channels, OnDutyOnly: u.OnDutyOnly}}
	if u.MinSeverity != "" {
		nu.Prefs.MinSeverity, _ = notify.ParseSeverity(u.MinSeverity)
	}
	if u.QuietHours != "" {
		q, _ := notify.ParseQuietHours(u.QuietHours)
		nu.Prefs.Quiet = &q
	}
	if u.Email != "" {
		nu.Addresses = append(nu.Addresses, notify.Address{Channel: "email", To: u.Email})
	}
	if u.Telegram != "" {
		nu.Addresses = append(nu.Addresses, notify.Address{Channel: "telegram", To: u.Telegram})
	}
	for _, s := range u.WebPush {
		nu.Addresses = append(nu.Addresses, notify.Address{Channel: "webpush", To: s})
	}
	return nu
}
