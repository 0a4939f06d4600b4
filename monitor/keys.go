package main

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// fieldSecret is the secret the API derives each session's field-verification signing key from
// (api.Config.FieldSecret): an HMAC of a fixed label under the monitor's signing key's seed. It
// is derived rather than stored so that it lives exactly as long as that key, and one-way so
// that the keys handed to phones reveal nothing of the signing key.
func fieldSecret(key ed25519.PrivateKey) []byte {
	m := hmac.New(sha256.New, key.Seed())
	m.Write([]byte("trenzinho field-verification secret v1"))
	return m.Sum(nil)
}

// loadOrCreateKey reads the monitor's ed25519 signing key (PKCS #8 PEM), creating it with mode
// 0600 on first start. The key signs every draft's evidence bundle; losing it does not
// invalidate earlier drafts (their exports carry the public key), but the next drafts are
// signed by a new key, which the chain of hashes still links.
func loadOrCreateKey(path string) (ed25519.PrivateKey, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, false, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, false, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("signing key: %w", err)
		}
		if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("signing key: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, false, err
		}
		return key, true, f.Close()
	}
	if err != nil {
		return nil, false, fmt.Errorf("signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, false, fmt.Errorf("signing key %s: not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, false, fmt.Errorf("signing key %s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, false, fmt.Errorf("signing key %s: not ed25519", path)
	}
	return key, false, nil
}
