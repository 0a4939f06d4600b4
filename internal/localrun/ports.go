package main

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ports are every port a run uses, on 127.0.0.1.
type ports struct {
	mqtt, influx, influxRPC, dashboard, ingestMetrics port
	// influxd is the private HTTP port of influxd behind the InfluxDB front (influxFront).
	influxd port
}

// port is one setting: its environment variable, its default, the port used.
type port struct {
	name     string // for people
	env      string
	def      int // 0: any free port
	port     int
	explicit bool // set by the environment: taken is an error, not replaced
	replaced bool // the default was taken: port is a free one
}

const host = "127.0.0.1"

func (p *port) addr() string { return net.JoinHostPort(host, strconv.Itoa(p.port)) }

func (p *port) describe() string {
	if p.replaced {
		return fmt.Sprintf("%d (%d ocupada)", p.port, p.def)
	}
	return strconv.Itoa(p.port)
}

func portsFromEnv() (ports, error) {
	ps := ports{
		mqtt:          port{name: "MQTT broker", env: "TRENZINHO_MQTT_PORT", def: 1883},
		influx:        port{name: "InfluxDB HTTP", env: "TRENZINHO_INFLUX_PORT", def: 8086},
		influxRPC:     port{name: "InfluxDB RPC (backup/restore)", env: "TRENZINHO_INFLUX_RPC_PORT", def: 8088},
		dashboard:     port{name: "dashboard", env: "TRENZINHO_LISTEN", def: 8080},
		ingestMetrics: port{name: "ingest metrics", env: "TRENZINHO_INGEST_METRICS_PORT", def: 9101},
		influxd:       port{name: "influxd's own HTTP"},
	}
	for _, p := range []*port{&ps.mqtt, &ps.influx, &ps.influxRPC, &ps.dashboard, &ps.ingestMetrics} {
		p.port = p.def
		v := os.Getenv(p.env)
		if v == "" {
			continue
		}
		if p.env == "TRENZINHO_LISTEN" { // an address, as the monitor takes it
			h, pp, err := net.SplitHostPort(v)
			if err != nil || (h != host && h != "localhost") {
				return ps, fmt.Errorf("%s=%q: want %s:PORT (make run listens on loopback only)", p.env, v, host)
			}
			v = pp
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return ps, fmt.Errorf("%s=%q: not a port", p.env, v)
		}
		p.port, p.explicit = n, true
	}
	return ps, nil
}

// reserve listens on the port and returns the listener: the caller holds the port until it
// closes it. A default port that is taken is replaced by a free one (and said so); a port set in
// the environment that is taken is an error. A process started on a port is then checked to be
// the one listening (supervisor.waitOwn).
func (p *port) reserve() (net.Listener, error) {
	if p.port != 0 {
		ln, err := net.Listen("tcp", p.addr())
		if err == nil {
			return ln, nil
		}
		if p.explicit {
			return nil, fmt.Errorf("%s port %d (%s) is taken: set %s to a free port, or unset it to let make run pick one", p.name, p.port, p.env, p.env)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	free := ln.Addr().(*net.TCPAddr).Port
	if p.def != 0 && p.port != free {
		slog.Warn("default port taken by another process: using a free one", "what", p.name, "default", p.def, "port", free, "setting", p.env)
		p.replaced = true
	}
	p.port = free
	return ln, nil
}

// reserveAll reserves ps and holds them until release is called.
func reserveAll(ps []*port) (release func(), err error) {
	var lns []net.Listener
	release = func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for _, p := range ps {
		ln, err := p.reserve()
		if err != nil {
			release()
			return nil, err
		}
		lns = append(lns, ln)
	}
	return release, nil
}

// influxFront is the run's InfluxDB HTTP port: localrun holds it from the start and passes
// requests to influxd once it answers (503 before, as a server that is starting would). Ingest
// has its URL from the start; influxd, built and started later, may have to move to another
// private port when another process took one meanwhile, without ingest noticing.
//
// It takes writes from this run's ingest alone, which authenticates with the run's token
// (writeToken, as TRENZINHO_INFLUX_TOKEN): the InfluxDB port is a well-known one (8086), and
// any other writer on the machine that has its URL — above all an ingest left running by an
// earlier run that was killed, still retrying the batches it held when its broker died — would
// otherwise add points that this run's broker never received to this run's database. Queries
// stay open to people and to the monitor.
type influxFront struct {
	srv        *http.Server
	backend    atomic.Pointer[httputil.ReverseProxy]
	writeToken string // user:password
}

// newWriteToken returns a random InfluxDB 1.8 token ("user:password") for one run's ingest.
func newWriteToken() string { return "localrun:" + rand.Text() }

func startInfluxFront(p *port, writeToken string) (*influxFront, error) {
	ln, err := p.reserve()
	if err != nil {
		return nil, err
	}
	f := &influxFront{writeToken: writeToken}
	f.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWrite(r) && !f.mayWrite(r) {
			http.Error(w, "writes are this run's ingest's alone (make run)", http.StatusUnauthorized)
			return
		}
		if b := f.backend.Load(); b != nil {
			b.ServeHTTP(w, r)
			return
		}
		http.Error(w, "InfluxDB is starting (make run)", http.StatusServiceUnavailable)
	})}
	go f.srv.Serve(ln)
	return f, nil
}

// isWrite reports whether r writes points: InfluxDB 1.8's /write and its 2.x compatible
// /api/v2/write.
func isWrite(r *http.Request) bool {
	return r.URL.Path == "/write" || r.URL.Path == "/api/v2/write"
}

// mayWrite reports whether r carries the run's token, as the InfluxDB 2 client sends it
// ("Token user:password"), as basic authentication or as the u and p parameters of 1.8.
func (f *influxFront) mayWrite(r *http.Request) bool {
	user, pass, _ := strings.Cut(f.writeToken, ":")
	got := ""
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Token "); ok {
		got = tok
	} else if u, p, ok := r.BasicAuth(); ok {
		got = u + ":" + p
	} else if q := r.URL.Query(); q.Has("u") {
		got = q.Get("u") + ":" + q.Get("p")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(user+":"+pass)) == 1
}

// connect passes the requests to influxd at addr from now on.
func (f *influxFront) connect(addr string) {
	f.backend.Store(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr}))
}

func (f *influxFront) close() { f.srv.Close() }
