package main

import (
	"fmt"
	"net/url"
	"strings"
)

// publicBase checks TRENZINHO_PUBLIC_URL, the address at which citizens reach the monitor
// (the base of the public verification URL an issued auto's PDF prints and its QR code
// carries), and returns it without a trailing slash. Empty is allowed: the PDF then prints the
// page's path alone and no QR code.
func publicBase(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("TRENZINHO_PUBLIC_URL: want an absolute http(s) URL without query, e.g. https://monitor.piuma.es.gov.br; got %q", s)
	}
	return strings.TrimRight(s, "/"), nil
}
