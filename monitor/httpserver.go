package main

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/clientip"
	"github.com/trenzinho/trenzinho/internal/connlimit"
	"github.com/trenzinho/trenzinho/monitor/api"
)

// Limits of the HTTP server (docs/operations.md, "HTTP limits").
const (
	defaultReadTimeout = 30 * time.Second
	// maxReadTimeout bounds TRENZINHO_HTTP_READ_TIMEOUT: a client may hold a connection and
	// its handler this long by sending its request slowly.
	maxReadTimeout         = 60 * time.Second
	maxReadHeaderTimeout   = 10 * time.Second
	maxHeaderBytes         = 64 << 10
	defaultMaxConnsPerAddr = 256
	idleTimeout            = 2 * time.Minute
)

// httpConfig are the settings of the monitor's HTTP server that bound what clients may hold.
type httpConfig struct {
	trustedProxies    string
	trusted           *clientip.Trusted // parsed from trustedProxies by check
	maxStreamsPerUser int
	readTimeout       time.Duration
	maxConnsPerAddr   int
}

func (c *httpConfig) bind(b *config.Binder) {
	b.String(&c.trustedProxies, "TRENZINHO_TRUSTED_PROXIES", "", "reverse proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client")
	b.Int(&c.maxStreamsPerUser, "TRENZINHO_MAX_STREAMS_PER_USER", api.DefaultMaxStreamsPerUser, "live streams (dashboard tabs) one user may hold open; more are refused with 429")
	b.Duration(&c.readTimeout, "TRENZINHO_HTTP_READ_TIMEOUT", defaultReadTimeout, "time to read a whole request, body included (at most 60s; the live stream is exempt)")
	b.Int(&c.maxConnsPerAddr, "TRENZINHO_HTTP_MAX_CONNS_PER_ADDR", defaultMaxConnsPerAddr, "connections one client address (IPv6: /64) may hold open at once; trusted proxies are exempt")
}

// check validates the settings after parsing.
func (c *httpConfig) check() error {
	t, err := clientip.Parse(c.trustedProxies)
	if err != nil {
		return err
	}
	c.trusted = t
	switch {
	case c.maxStreamsPerUser < 1:
		return fmt.Errorf("TRENZINHO_MAX_STREAMS_PER_USER=%d: want at least 1", c.maxStreamsPerUser)
	case c.readTimeout <= 0 || c.readTimeout > maxReadTimeout:
		return fmt.Errorf("TRENZINHO_HTTP_READ_TIMEOUT=%s: want more than 0 and at most %s", c.readTimeout, maxReadTimeout)
	case c.maxConnsPerAddr < 1:
		return fmt.Errorf("TRENZINHO_HTTP_MAX_CONNS_PER_ADDR=%d: want at least 1", c.maxConnsPerAddr)
	}
	return nil
}

// newHTTPServer is the monitor's HTTP server for h. A request must arrive whole within the read
// timeout (its headers within at most 10 s of it): a client that trickles its body holds a
// connection and a handler no longer than that. The live stream lifts the deadline for itself
// once it starts (api: handleStream). No write timeout: the stream and the PDF exports set their
// own per write.
func newHTTPServer(h http.Handler, c httpConfig) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadTimeout:       c.readTimeout,
		ReadHeaderTimeout: min(maxReadHeaderTimeout, c.readTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       idleTimeout,
	}
}

// limitListener caps the connections of each client address on ln, trusted proxies exempt,
// and counts those refused in reg.
func limitListener(ln net.Listener, c httpConfig, reg prometheus.Registerer) *connlimit.Listener {
	l := connlimit.New(ln, c.maxConnsPerAddr, c.trusted.Contains)
	if reg != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "trenzinho_monitor_http_connections_refused_total",
			Help: "HTTP connections closed on accept because their client address held TRENZINHO_HTTP_MAX_CONNS_PER_ADDR already.",
		}, func() float64 { return float64(l.Refused()) }))
	}
	return l
}
