package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"testing"
)

func TestParsePublicKey(t *testing.T) {
	pub := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	for _, s := range []string{base64.StdEncoding.EncodeToString(pub), base64.RawURLEncoding.EncodeToString(pub), " " + base64.StdEncoding.EncodeToString(pub) + "\n"} {
		k, err := parsePublicKey(s)
		if err != nil || !k.Equal(pub) {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "!!!", base64.StdEncoding.EncodeToString(pub[:31])} {
		if _, err := parsePublicKey(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
