package main

import (
	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/clientip"
)

// httpConfig are the settings of the monitor's HTTP server that bound what clients may hold
// (docs/operations.md, "HTTP limits").
type httpConfig struct {
	trustedProxies string
	trusted        *clientip.Trusted // parsed from trustedProxies by check
}

func (c *httpConfig) bind(b *config.Binder) {
	b.String(&c.trustedProxies, "TRENZINHO_TRUSTED_PROXIES", "", "reverse proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client")
}

// check validates the settings after parsing.
func (c *httpConfig) check() error {
	t, err := clientip.Parse(c.trustedProxies)
	if err != nil {
		return err
	}
	c.trusted = t
	return nil
}
