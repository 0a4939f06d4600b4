package main

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/judge"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/web"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// defaultCheckpointPages is when the WAL is copied back to the database file beside the judge's
// commits (store.(*DB).CheckpointAt): half of SQLite's own threshold inside a commit (10,000
// pages), so that the commit-time checkpoint, which an event's commit would wait for, stays a
// backstop (docs/benchmarks.md, "Monitor: publish to episode").
const defaultCheckpointPages = 5000

// checkpointPoll is how often the WAL's size is looked at: one read of the wal-index header.
const checkpointPoll = 100 * time.Millisecond

type serveConfig struct {
	mqtt          config.MQTT
	geofences     string
	profile       string
	db            string
	dataDir       string
	listen        string
	adminUser     string
	adminPassword string
	adminAgent    store.Agent
	registry      string
	clientID      string
	secureCookie  bool
	logLevel      string
	signingKey    string
	draftSettle   time.Duration
	draftWait     time.Duration
	checkpoint    time.Duration
	ckptPages     int
	tileURL       string
	basemap       string
	publicURL     string
	uploadScan    string
	http          httpConfig
	limits        wire.Limits
	maxVehicles   int
	notifications string
	bundles       bundleConfig
	complaints    complaintsConfig
	whatifDir     string
	// now is the monitor's clock (clock.go); nil: time.Now.
	now func() time.Time
}

func cmdServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	b := config.NewBinder(fs)
	var c serveConfig
	b.BindMQTT(&c.mqtt)
	b.String(&c.geofences, "TRENZINHO_GEOFENCES", "", "GeoJSON file or directory of geofences (empty: the Piúma sample set)")
	b.String(&c.basemap, "TRENZINHO_BASEMAP", "", "GeoJSON street extract (monitor geofences import-osm) the dashboard's map draws when no tiles load (empty: the streets of the geofences; with the sample geofences, the sample streets)")
	b.String(&c.profile, "TRENZINHO_PROFILE", "", "legal profile YAML (empty: the built-in Piúma profile)")
	b.String(&c.db, "TRENZINHO_DB", "trenzinho-monitor.db", "the database: episodes, users, audit — a SQLite file, or a PostgreSQL URL (postgres://…)")
	b.String(&c.dataDir, "TRENZINHO_DATA_DIR", "", "directory of the monitor's files (signing key, configuration bundles' state, what-if runs); empty: the SQLite database's (required with a PostgreSQL URL)")
	b.String(&c.listen, "TRENZINHO_LISTEN", "127.0.0.1:8080", "HTTP address of the API and the dashboard")
	b.String(&c.adminUser, "TRENZINHO_ADMIN_USER", "", "first admin account, created at first start")
	b.String(&c.adminPassword, "TRENZINHO_ADMIN_PASSWORD", "", "password of the first admin account")
	b.String(&c.adminAgent.FullName, "TRENZINHO_ADMIN_FULL_NAME", "", "full name of the first admin account, printed on the autos it issues")
	b.String(&c.adminAgent.Matricula, "TRENZINHO_ADMIN_MATRICULA", "", "registration number (matrícula) of the first admin account")
	b.String(&c.adminAgent.Cargo, "TRENZINHO_ADMIN_CARGO", "", "post (cargo) of the first admin account")
	b.String(&c.registry, "TRENZINHO_REGISTRY", "", "registry YAML: licensees, vehicles, drivers, devices (optional)")
	b.String(&c.clientID, "TRENZINHO_MONITOR_CLIENT_ID", "trenzinho-monitor", "MQTT client id (persistent session)")
	b.Bool(&c.secureCookie, "TRENZINHO_SECURE_COOKIE", false, "mark the session cookie Secure behind a TLS proxy")
	b.String(&c.logLevel, "TRENZINHO_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	b.String(&c.signingKey, "TRENZINHO_SIGNING_KEY", "", "the monitor's ed25519 key that signs drafts (default: monitor-signing.key beside the database, created at first start)")
	b.Duration(&c.draftSettle, "TRENZINHO_DRAFT_SETTLE", 150*time.Second, "how long after its last change an episode waits before it is drafted")
	b.Duration(&c.draftWait, "TRENZINHO_DRAFT_VERIFICATION_WAIT", drafts.DefaultVerificationWait, "how long after its last change an episode that grounds an auto only once an agent verifies it holds its conduct's draft, so that the verification joins the same draft")
	b.Duration(&c.checkpoint, "TRENZINHO_MONITOR_CHECKPOINT_INTERVAL", 0, "copy the database's WAL back to its file this often, outside the judge's commits (0: when it holds TRENZINHO_MONITOR_CHECKPOINT_PAGES; docs/benchmarks.md)")
	b.Int(&c.ckptPages, "TRENZINHO_MONITOR_CHECKPOINT_PAGES", defaultCheckpointPages, "copy the database's WAL back to its file, outside the judge's commits, once it holds this many 4 KiB pages (0: SQLite does it in the commit that fills 10,000 pages; docs/benchmarks.md)")
	b.String(&c.tileURL, "TRENZINHO_TILE_URL", "", "map tile URL template for the dashboard, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png (empty: no tiles)")
	b.String(&c.uploadScan, "TRENZINHO_UPLOAD_SCAN", "", "command that scans each attachment of a defence or appeal filed in the licensee's portal, run with the file's path as its last argument (exit 0: clean, 1: refused), e.g. \"clamdscan --no-summary\" (empty: no scan)")
	b.String(&c.publicURL, "TRENZINHO_PUBLIC_URL", "", "public base URL of the monitor, e.g. https://monitor.piuma.es.gov.br: issued autos print <URL>/v/<code> and its QR code (empty: the path only, no QR code)")
	c.http.bind(b)
	c.bundles.bind(b)
	c.complaints.bind(b)
	b.String(&c.whatifDir, "TRENZINHO_WHATIF_DIR", "", "directory of the what-if replays run from the dashboard and the portal, one subdirectory per run with its isolated stores and report (empty: whatif/ beside the database)")
	b.BindLimits(&c.limits)
	var cpuProfile, traceFile string
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file until the monitor stops")
	fs.StringVar(&traceFile, "trace", "", "write an execution trace (go tool trace) to this file until the monitor stops")
	b.Int(&c.maxVehicles, "TRENZINHO_MAX_VEHICLES", judge.DefaultMaxVehicles, "most vehicles tracked without a registry (with one: the registered vehicles); others are rejected as unknown_vehicle")
	b.String(&c.notifications, "TRENZINHO_NOTIFICATIONS", "", "notifications file: e-mail, Telegram, Web Push, users, on-duty schedule (empty: none; docs/operations.md §13)")
	if err := b.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (serve takes flags only; \"monitor help\" lists the commands)", fs.Arg(0))
	}
	if err := c.http.check(); err != nil {
		return err
	}
	if err := c.bundles.check(); err != nil {
		return err
	}
	if err := c.complaints.check(); err != nil {
		return err
	}
	if err := c.limits.Validate(); err != nil {
		return err
	}
	if err := checkDraftWaits(c.draftSettle, c.draftWait); err != nil {
		return err
	}
	publicURL, err := publicBase(c.publicURL)
	if err != nil {
		return err
	}
	c.publicURL = publicURL
	log, err := config.Logger(os.Stderr, c.logLevel)
	if err != nil {
		return err
	}
	if c.now, err = clock(); err != nil {
		return err
	}
	stop, err := startProfiles(cpuProfile, traceFile)
	if err != nil {
		return err
	}
	defer stop()
	return serve(ctx, c, log)
}

// checkDraftWaits refuses a drafter's settle or verification wait that is not positive, and a
// verification wait shorter than the settle: every draft waits for the settle anyway, so such a
// wait would say what the drafter does not do.
func checkDraftWaits(settle, wait time.Duration) error {
	if settle <= 0 {
		return fmt.Errorf("TRENZINHO_DRAFT_SETTLE: want a positive duration, e.g. 150s; got %v", settle)
	}
	if wait < settle {
		return fmt.Errorf("TRENZINHO_DRAFT_VERIFICATION_WAIT: want a duration of at least TRENZINHO_DRAFT_SETTLE (%v), e.g. 24h; got %v", settle, wait)
	}
	return nil
}

// startProfiles starts the CPU profile and the execution trace asked for (empty: not that one);
// stop ends them and closes their files (docs/benchmarks.md, "Monitor: publish to episode":
// the monitor under `go run ./monitor/loadtest`).
func startProfiles(cpuProfile, traceFile string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range slices.Backward(stops) {
			s()
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return stop, fmt.Errorf("-cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return stop, fmt.Errorf("-cpuprofile: %w", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err != nil {
			stop()
			return func() {}, fmt.Errorf("-trace: %w", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return func() {}, fmt.Errorf("-trace: %w", err)
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	return stop, nil
}

func serve(ctx context.Context, c serveConfig, log *slog.Logger) error {
	// A CA or client certificate that cannot be read fails the start, as in ingest and the bridge.
	tlsCfg, err := c.mqtt.TLSConfig()
	if err != nil {
		return err
	}
	now := c.now
	if now == nil {
		now = time.Now
	}
	if time.Until(now()).Abs() > time.Minute {
		log.Warn("the monitor runs on a fake clock", "now", now().Format(time.RFC3339))
	}
	prof := profile.Piuma()
	if c.profile != "" {
		if prof, err = profile.Load(c.profile); err != nil {
			return err
		}
	}
	var set *geofences.Set
	if c.geofences != "" {
		set, err = geofences.Load(c.geofences)
	} else {
		log.Warn("TRENZINHO_GEOFENCES not set: using the Piúma sample geofences (sample data, not for notices)")
		set, err = geofences.Sample()
	}
	if err != nil {
		return err
	}
	// The street base map: an extract of its own, else the geofences' streets (api.MapConfig),
	// else with the sample geofences the sample streets — a sample, not a survey.
	var streets *geofences.Set
	switch {
	case c.basemap != "":
		if streets, err = geofences.Load(c.basemap); err != nil {
			return fmt.Errorf("TRENZINHO_BASEMAP: %w", err)
		}
	case c.geofences == "":
		if streets, err = geofences.SampleStreets(); err != nil {
			return err
		}
	}
	var regStore *registry.Store
	if c.registry != "" {
		if regStore, err = registry.Open(c.registry); err != nil {
			return err
		}
		regStore.SetLocation(prof.Location())
		log.Info("registry loaded", "path", c.registry, "vehicles", len(regStore.Vehicles()), "licensees", len(regStore.Licensees()))
		// Keys registered by `monitor vehicle add` (or edits by hand) apply without a restart.
		go regStore.Watch(ctx, registry.DefaultWatchInterval, log)
	} else {
		log.Warn("TRENZINHO_REGISTRY not set: every vehicle is judged as not registered (veículo não cadastrado)")
	}
	if prof.SignaturesRequired && regStore == nil {
		return errors.New("the profile requires signed batches (signatures_required) but no registry holds the vehicles' keys: set TRENZINHO_REGISTRY")
	}
	if store.IsURL(c.db) && c.dataDir == "" {
		return errors.New("with a PostgreSQL database (TRENZINHO_DB=postgres://…), set TRENZINHO_DATA_DIR: the directory of the signing key and the monitor's other files")
	}
	if err := os.MkdirAll(c.dataDirectory(), 0o750); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	db, err := store.Open(ctx, c.db)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetClock(now)
	if c.checkpoint > 0 {
		ckptCtx, stopCheckpoints := context.WithCancel(ctx)
		defer stopCheckpoints() // before db.Close
		go db.Checkpoint(ckptCtx, c.checkpoint)
	} else if c.ckptPages > 0 {
		ckptCtx, stopCheckpoints := context.WithCancel(ctx)
		defer stopCheckpoints() // before db.Close
		go db.CheckpointAt(ckptCtx, c.ckptPages, checkpointPoll)
	}
	created, err := db.EnsureAdmin(ctx, c.adminUser, c.adminPassword)
	switch {
	case errors.Is(err, store.ErrNoAdmin):
		return errors.New("no admin account yet: set TRENZINHO_ADMIN_USER and TRENZINHO_ADMIN_PASSWORD for the first start")
	case err != nil:
		return err
	case created:
		log.Info("admin account created", "user", c.adminUser)
		if c.adminAgent != (store.Agent{}) {
			if err := db.SetAgent(ctx, c.adminUser, c.adminAgent); err != nil {
				return err
			}
		}
	}
	for _, w := range prof.Warnings() {
		log.Warn("legal profile: " + w)
	}

	keyPath := c.signingKey
	if keyPath == "" {
		keyPath = filepath.Join(c.dataDirectory(), "monitor-signing.key")
	}
	key, createdKey, err := loadOrCreateKey(keyPath)
	if err != nil {
		return err
	}
	pub := key.Public().(ed25519.PublicKey)
	log.Info("draft signing key", "path", keyPath, "created", createdKey, "public_key", hex.EncodeToString(pub),
		"fingerprint", api.KeyFingerprint(pub))
	profileYAML := profile.PiumaYAML()
	if c.profile != "" {
		if profileYAML, err = os.ReadFile(c.profile); err != nil {
			return err
		}
	}
	drafter := drafts.NewDrafter(drafts.Config{
		Store: db, Profile: prof, ProfileYAML: profileYAML, Places: set, Key: key,
		Software: "trenzinho-monitor " + version, Logger: log, Settle: c.draftSettle,
		VerificationWait: c.draftWait, Registry: regStore,
	})

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	engine := rules.New(prof, set)
	if regStore != nil {
		// The lookup reads the store's current version on every batch: edits through the API
		// apply from the next batch on.
		engine.SetRegistry(rules.FromRegistry(regStore))
	}
	hub := api.NewHub(api.HubConfig{Logger: log, MaxStreamsPerUser: c.http.maxStreamsPerUser})
	notifier, judgeHub, directory, escalator, err := notifications(c.notifications, hub, regStore, db, reg, now, log)
	if err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	if err := directory.Refresh(ctx); err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	var client mqtt.Client
	var known func(string) bool
	if regStore != nil {
		// Telemetry and status of vehicles not in the registry leave nothing behind.
		known = func(id string) bool { _, ok := regStore.Vehicle(id); return ok }
	}
	j := judge.New(judge.Config{
		Engine: engine, Store: db, Hub: judgeHub, Logger: log, Metrics: reg, Drafter: drafter, Pruner: db.PruneBatches,
		Signatures: batchsig.Policy{Required: prof.SignaturesRequired, Keys: batchsig.RegistryKeys(regStore)},
		Limits:     c.limits, Known: known, MaxVehicles: c.maxVehicles, Now: now,
		Publish: func(topic string, payload []byte) {
			if client != nil && client.IsConnectionOpen() {
				client.Publish(topic, 1, false, payload)
			}
		},
	})
	var deadLetters api.DeadLetters
	if notifier != nil {
		deadLetters = notifier
	}
	bundles := &bundler{cfg: c.bundles, key: key, profileID: prof.ID, profileYAML: string(profileYAML), set: set,
		reg: regStore, log: log, now: now, geo: map[string]json.RawMessage{}, issued: map[string]issued{},
		statePath: c.bundlesState()}
	complaintsCfg, closeComplaints, err := complaintsAPI(c.complaints, db, prof, set, regStore, c.notifications, c.publicURL, log)
	if err != nil {
		return fmt.Errorf("complaints: %w", err)
	}
	defer closeComplaints()
	whatifCfg, closeWhatif, err := whatifAPI(c, prof, profileYAML, set, regStore, log)
	if err != nil {
		return err
	}
	defer closeWhatif()
	srv := api.New(api.Config{
		Logger: log, Now: now, Users: db, Audit: db, Episodes: db, Fleet: bundleFleet{j, bundles}, Drafts: db, DraftKey: pub, DraftSettle: c.draftSettle, Health: db.Ping, Metrics: reg,
		RenderPDF: noticePDF(db, prof, c.tileURL, c.publicURL, version, log), Hub: hub, Static: web.Handler(web.Options{TileURL: c.tileURL}), SecureCookie: c.secureCookie,
		Map:           api.MapConfig{Geofences: set, Profile: prof, TileURL: c.tileURL, Streets: streets},
		RegistryStore: regStore,
		Cases: &api.CasesConfig{Store: db, Profile: prof, Registry: regStore, Now: now,
			GroundsMissing: cases.EpisodeGrounds(db.Episode, store.ErrNotFound)},
		TrustedProxies:   c.http.trusted,
		DeadLetters:      deadLetters,
		Triage:           db,
		Notify:           &api.NotifyConfig{Directory: directory, Location: prof.Location()},
		Public:           &api.PublicConfig{Store: db, Location: prof.Location()},
		Transparency:     db,
		Photos:           db,
		FieldSecret:      fieldSecret(key),
		Warnings:         db,
		Portal:           &api.PortalConfig{Store: db, ScanCommand: strings.Fields(c.uploadScan)},
		Complaints:       complaintsCfg,
		VerificationWait: c.draftWait,
		Whatif:           whatifCfg,
	})
	if err := j.Restore(ctx); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	judgeDone := make(chan error, 1)
	go func() { judgeDone <- j.Run(runCtx) }()
	if notifier != nil {
		go notifier.Run(runCtx, 0)
		go directory.Run(runCtx, 0)
	}
	if escalator != nil {
		go escalator.Run(runCtx, 0)
	}
	if complaintsCfg != nil {
		go sweepComplaintContacts(runCtx, db, prof.Complaints.ContactRetention(), now, log)
	}

	client = mqtt.NewClient(monitorMQTTOptions(c, tlsCfg, log, j.MQTTHandler(runCtx)))
	// With ConnectRetry the connect token completes only once connected: do not wait for it,
	// so that the API serves (and SIGTERM stops the monitor) while the broker is unreachable.
	if connect := client.Connect(); !connect.WaitTimeout(5 * time.Second) {
		log.Warn("broker unreachable; retrying in the background", "url", c.mqtt.URL)
	} else if err := connect.Error(); err != nil {
		log.Warn("broker unreachable; retrying in the background", "url", c.mqtt.URL, "err", err)
	}
	go bundles.run(runCtx, client) // the bridges' signed configuration (configpub.go)

	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hs := newHTTPServer(srv.Handler(), c.http)
	httpDone := make(chan error, 1)
	go func() { httpDone <- hs.Serve(limitListener(ln, c.http, reg)) }()
	log.Info("monitor listening", "addr", ln.Addr().String(), "profile", prof.ID, "geofences", set.Len(), "version", version)

	var runErr error
	judgeStopped := false
	select {
	case <-ctx.Done():
	case runErr = <-judgeDone:
		// The judge gave up (a database that fails for good): stop now, non-zero, so that the
		// supervisor restarts or reports the monitor. Never wait on judgeDone again below.
		judgeStopped = true
		log.Error("the judge stopped; the monitor exits", "err", runErr)
	case runErr = <-httpDone:
	}
	log.Info("shutting down")
	srv.Hub().Close()
	shCtx, shCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer shCancel()
	_ = hs.Shutdown(shCtx)
	// Stop receiving before the judge commits what it has: unacknowledged messages are
	// redelivered to the next start.
	client.Disconnect(250)
	cancel()
	if !judgeStopped {
		if err := <-judgeDone; err != nil && runErr == nil && !errors.Is(err, context.Canceled) {
			runErr = err
		}
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

func monitorMQTTOptions(c serveConfig, tlsCfg *tls.Config, log *slog.Logger, handler mqtt.MessageHandler) *mqtt.ClientOptions {
	o := mqtt.NewClientOptions().
		AddBroker(c.mqtt.URL).
		SetClientID(c.clientID).
		SetUsername(c.mqtt.User).
		SetPassword(c.mqtt.Password).
		SetCleanSession(false).
		SetAutoAckDisabled(true).
		SetOrderMatters(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(2 * time.Second).
		SetMaxReconnectInterval(30 * time.Second).
		SetKeepAlive(30 * time.Second).
		SetDefaultPublishHandler(handler)
	o.SetOnConnectHandler(func(cl mqtt.Client) {
		log.Info("connected to the broker", "url", c.mqtt.URL)
		tok := cl.SubscribeMultiple(map[string]byte{wire.TelemetryWildcard: 1, wire.StatusWildcard: 1}, handler)
		if tok.Wait(); tok.Error() != nil {
			log.Error("subscribe", "err", tok.Error())
		}
	})
	o.SetConnectionLostHandler(func(_ mqtt.Client, err error) {
		log.Warn("connection to the broker lost", "err", err)
	})
	if tlsCfg != nil {
		o.SetTLSConfig(tlsCfg)
	}
	return o
}

// dataDirectory is where the monitor keeps its files: TRENZINHO_DATA_DIR, else the SQLite
// database's directory (a PostgreSQL database requires TRENZINHO_DATA_DIR).
func (c *serveConfig) dataDirectory() string {
	if c.dataDir != "" {
		return c.dataDir
	}
	return filepath.Dir(c.db)
}

// bundlesState is the file of the configuration bundles' state: beside a SQLite database, as
// it always was; in the data directory with a PostgreSQL one.
func (c *serveConfig) bundlesState() string {
	if store.IsURL(c.db) || c.dataDir != "" {
		return filepath.Join(c.dataDirectory(), "trenzinho-monitor.bundles.json")
	}
	return c.db + ".bundles.json"
}
