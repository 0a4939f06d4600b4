package store

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password length bounds, in characters. The upper bound keeps a request from making the server
// hash megabytes.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 256
)

// argonParams are the argon2id parameters of new hashes: OWASP's baseline (19 MiB, 2 passes,
// 1 lane). A hash records its own parameters, so raising these later rehashes each password at
// its next successful login.
type argonParams struct {
	memory  uint32 // KiB
	time    uint32
	threads uint8
	keyLen  uint32
}

var currentParams = argonParams{memory: 19 * 1024, time: 2, threads: 1, keyLen: 32}

const saltLen = 16

func checkPasswordLen(password string) error {
	if n := utf8.RuneCountInString(password); n < MinPasswordLen || n > MaxPasswordLen {
		return fmt.Errorf("%w: it must have %d to %d characters", ErrWeakPassword, MinPasswordLen, MaxPasswordLen)
	}
	return nil
}

// hashPassword returns the PHC string of password:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>, base64 without padding.
func hashPassword(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	p := currentParams
	key := argon2.IDKey([]byte(password), salt, p.time, p.memory, p.threads, p.keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memory, p.time, p.threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

var errBadHash = errors.New("malformed password hash")

// verifyPassword reports whether password matches the PHC string encoded, and whether encoded
// was made with other parameters than the current ones.
func verifyPassword(encoded, password string) (ok, stale bool, err error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, false, errBadHash
	}
	var p argonParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return false, false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 || p.memory == 0 || p.time == 0 || p.threads == 0 {
		return false, false, errBadHash
	}
	p.keyLen = uint32(len(want))
	got := argon2.IDKey([]byte(password), salt, p.time, p.memory, p.threads, p.keyLen)
	return subtle.ConstantTimeCompare(got, want) == 1, p != currentParams, nil
}

// dummyHash is hashed against when a login names an unknown user, so that the answer takes as
// long as for a known one and does not tell which names exist.
var dummyHash = sync.OnceValue(func() string {
	h, err := hashPassword("not a password: a timing decoy")
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return h
})
