package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// recordSize is the aes128gcm record size written in the header (RFC 8188 §2.1); one record
// carries the whole payload, so it bounds the plaintext to recordSize − 16 (tag) − 1
// (delimiter).
const recordSize = 4096

// MaxPayload is the largest plaintext one message may carry.
const MaxPayload = recordSize - 16 - 1

// encrypt seals plaintext for the user agent's key uaPublic (65-byte uncompressed P-256 point)
// and authentication secret (16 bytes), with the application server's ephemeral key asKey and
// a random 16-byte salt, as RFC 8291 §3.4 and RFC 8188 (content coding aes128gcm) define: the
// header salt ‖ rs ‖ idlen ‖ keyid (the server's public key), then one record, the plaintext
// followed by the last-record delimiter 0x02 and no padding.
func encrypt(plaintext, uaPublic, authSecret, salt []byte, asKey *ecdh.PrivateKey) ([]byte, error) {
	if len(plaintext) > MaxPayload {
		return nil, fmt.Errorf("payload of %d bytes exceeds %d", len(plaintext), MaxPayload)
	}
	if len(authSecret) != 16 {
		return nil, fmt.Errorf("auth secret of %d bytes, want 16", len(authSecret))
	}
	if len(salt) != 16 {
		return nil, errors.New("salt must be 16 bytes")
	}
	ua, err := ecdh.P256().NewPublicKey(uaPublic)
	if err != nil {
		return nil, fmt.Errorf("p256dh: %w", err)
	}
	secret, err := asKey.ECDH(ua)
	if err != nil {
		return nil, err
	}
	asPublic := asKey.PublicKey().Bytes()
	// IKM = HKDF(auth_secret, ecdh_secret, "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public, 32)
	keyInfo := append(append([]byte("WebPush: info\x00"), uaPublic...), asPublic...)
	ikm, err := hkdf.Key(sha256.New, secret, authSecret, string(keyInfo), 32)
	if err != nil {
		return nil, err
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 16+4+1+len(asPublic)+len(plaintext)+1+16)
	out = append(out, salt...)
	out = binary.BigEndian.AppendUint32(out, recordSize)
	out = append(out, byte(len(asPublic)))
	out = append(out, asPublic...)
	record := append(append([]byte(nil), plaintext...), 0x02)
	// One record: its sequence number is 0, so the nonce is NONCE XOR 0 = NONCE.
	return gcm.Seal(out, nonce, record, nil), nil
}
