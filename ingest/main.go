// Ingest archives the fleet's telemetry: it subscribes to trenzinho/v1/+/telemetry on the MQTT
// broker and writes every batch to InfluxDB (schema in docs/storage.md), acknowledging each
// message only once its points are stored. Malformed payloads are quarantined.
//
// Usage:
//
//	ingest [flags]
//
// Every flag can also be set in the environment (TRENZINHO_MQTT_URL is --mqtt-url); ingest
// --help lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/ingest/archive"
)

// version is set at build time with -ldflags "-X main.version=…" (the Makefile's VERSION).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		s             archive.Settings
		metricsListen string
		inflightMB    int
		logLevel      string
		cpuProfile    string
	)
	b := config.NewBinder(fs)
	b.BindMQTT(&s.MQTT.MQTT)
	b.BindInflux(&s.Influx.Influx)
	b.String(&metricsListen, "TRENZINHO_METRICS_LISTEN", "", "address of the Prometheus /metrics endpoint, e.g. 127.0.0.1:9101 (off when empty)")
	b.String(&s.MQTT.ClientID, "TRENZINHO_INGEST_CLIENT_ID", defaultClientID(), "MQTT client id: names the persistent session; stable per instance, unique between instances")
	b.String(&s.MQTT.ShareGroup, "TRENZINHO_INGEST_SHARE_GROUP", "", "shared subscription group ($share/GROUP/…): instances of one group share the load")
	b.Duration(&s.MQTT.KeepAlive, "TRENZINHO_INGEST_KEEPALIVE", 30*time.Second, "MQTT keepalive")
	b.Int(&s.Pipeline.BatchLines, "TRENZINHO_INGEST_BATCH_LINES", 5000, "points per InfluxDB write")
	b.Int(&s.Pipeline.BatchMessages, "TRENZINHO_INGEST_BATCH_MESSAGES", 0, "messages per InfluxDB write (0: max-inflight ÷ (write-concurrency + 1), half of it for one write at a time)")
	b.Duration(&s.Pipeline.FlushInterval, "TRENZINHO_INGEST_BATCH_INTERVAL", time.Second, "longest wait before a partial write")
	b.Int(&s.Pipeline.MaxInFlight, "TRENZINHO_INGEST_MAX_INFLIGHT", 1000, "the broker's max_inflight_messages; ingest holds at most twice as many messages unacknowledged")
	b.Int(&inflightMB, "TRENZINHO_INGEST_MAX_INFLIGHT_MB", 256, "payload MiB held unacknowledged at most")
	b.Int(&s.Pipeline.WriteConcurrency, "TRENZINHO_INGEST_WRITE_CONCURRENCY", 1, "InfluxDB writes in flight at once; messages are acknowledged in arrival order")
	b.Duration(&s.Pipeline.WriteTimeout, "TRENZINHO_INGEST_WRITE_TIMEOUT", 10*time.Second, "timeout of one InfluxDB request")
	b.Duration(&s.Pipeline.RetryMax, "TRENZINHO_INGEST_RETRY_MAX", 10*time.Second, "longest backoff between retries of a failed write")
	b.Duration(&s.Pipeline.ShutdownTimeout, "TRENZINHO_INGEST_SHUTDOWN_TIMEOUT", 20*time.Second, "longest final flush on SIGTERM; the rest is redelivered by the broker")
	b.Bool(&s.Influx.Gzip, "TRENZINHO_INGEST_GZIP", false, "gzip the InfluxDB write requests (for an InfluxDB behind a slow link; costs CPU and latency)")
	b.Duration(&s.Influx.Retention, "TRENZINHO_INGEST_RETENTION", archive.DefaultRetention, "retention of a bucket or retention policy that ingest creates (0: for ever)")
	b.String(&s.Registry, "TRENZINHO_REGISTRY", "", "registry YAML with the vehicles' public keys: signed batches are verified and forged ones quarantined (reloaded when it changes)")
	b.Bool(&s.Pipeline.Signatures.Required, "TRENZINHO_REQUIRE_SIGNATURES", false, "quarantine unsigned batches and batches of vehicles without a registered key (set as the profile's signatures_required)")
	b.BindLimits(&s.Pipeline.Limits)
	b.String(&logLevel, "TRENZINHO_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file until ingest stops")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ingest [flags]\n\n"+
			"Archives the telemetry of trenzinho/v1/+/telemetry from MQTT into InfluxDB (1.8 or 2.x),\n"+
			"acknowledging each message once stored; malformed payloads are quarantined.\n"+
			"Every flag can be set in the environment variable named after it.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := b.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "ingest:", err)
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, version)
		return 0
	}
	if err := s.Pipeline.Limits.Validate(); err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ingest: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log, err := config.Logger(stderr, logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 2
	}
	if s.Influx.URL == "" {
		log.Error("TRENZINHO_INFLUX_URL (--influx-url) is required")
		return 2
	}
	s.Pipeline.MaxInFlightBytes = int64(inflightMB) << 20
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			log.Error("--cpuprofile", "error", err)
			return 1
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			log.Error("--cpuprofile", "error", err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if metricsListen != "" {
		srv, err := serveMetrics(metricsListen, reg, log)
		if err != nil {
			log.Error("metrics endpoint", "error", err)
			return 1
		}
		defer srv.Close()
	}
	log.Info("ingest starting", "mqtt", s.MQTT.URL, "client_id", s.MQTT.ClientID, "filter", s.MQTT.Filter(),
		"influx", s.Influx.URL, "bucket", s.Influx.Bucket)
	if err := archive.Run(ctx, s, reg, log); err != nil {
		log.Error("ingest", "error", err)
		return 1
	}
	return 0
}

func defaultClientID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "local"
	}
	return "trenzinho-ingest-" + host
}

func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics endpoint", "error", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return srv, nil
}
