package main

import (
	"fmt"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/clientip"
	"github.com/trenzinho/trenzinho/monitor/api"
)

// httpConfig are the settings of the monitor's HTTP server that bound what clients may hold
// (docs/operations.md, "HTTP limits").
type httpConfig struct {
	trustedProxies    string
	trusted           *clientip.Trusted // parsed from trustedProxies by check
	maxStreamsPerUser int
}

func (c *httpConfig) bind(b *config.Binder) {
	b.String(&c.trustedProxies, "TRENZINHO_TRUSTED_PROXIES", "", "reverse proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client")
	b.Int(&c.maxStreamsPerUser, "TRENZINHO_MAX_STREAMS_PER_USER", api.DefaultMaxStreamsPerUser, "live streams (dashboard tabs) one user may hold open; more are refused with 429")
}

// check validates the settings after parsing.
func (c *httpConfig) check() error {
	t, err := clientip.Parse(c.trustedProxies)
	if err != nil {
		return err
	}
	c.trusted = t
	if c.maxStreamsPerUser < 1 {
		return fmt.Errorf("TRENZINHO_MAX_STREAMS_PER_USER=%d: want at least 1", c.maxStreamsPerUser)
	}
	return nil
}
