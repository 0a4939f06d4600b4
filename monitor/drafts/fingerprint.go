package drafts

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// KeyFingerprint is the fingerprint of a monitor's public key as people compare it — on the
// public verification page, on the auto's PDF, in the server's start log, and against the
// one the municipality publishes: the SHA-256 of the 32-byte key, in hex groups of four.
func KeyFingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	h := hex.EncodeToString(sum[:])
	var b strings.Builder
	for i := 0; i < len(h); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h[i : i+4])
	}
	return b.String()
}
