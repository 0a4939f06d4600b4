package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
)

// Encode serialises a batch for publishing. When key is not nil the batch is signed: the bytes
// without "sig" are signed and `,"sig":"…"` is appended as the last member (docs/protocol.md §6).
// It refuses what Decode would reject for its shape (non-finite numbers, zero times).
func Encode(b *Batch, key ed25519.PrivateKey) ([]byte, error) {
	c := *b
	c.Sig = ""
	if err := c.checkFinite(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("wire: encode batch %s/%d: %w", b.Epoch, b.Seq, err)
	}
	if key == nil {
		return body, nil
	}
	if c.Kid == "" {
		return nil, fmt.Errorf("wire: signing batch %s/%d without kid", b.Epoch, b.Seq)
	}
	sig := ed25519.Sign(key, body)
	return appendSig(body, base64.StdEncoding.EncodeToString(sig)), nil
}

// EncodeStatus serialises a status message, signed as Encode signs a batch when key is not nil.
func EncodeStatus(s *Status, key ed25519.PrivateKey) ([]byte, error) {
	c := *s
	c.Sig = ""
	body, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("wire: encode status: %w", err)
	}
	if key == nil {
		return body, nil
	}
	if c.Kid == "" {
		return nil, fmt.Errorf("wire: signing a status without kid")
	}
	return appendSig(body, base64.StdEncoding.EncodeToString(ed25519.Sign(key, body))), nil
}

func appendSig(body []byte, sig string) []byte {
	out := make([]byte, 0, len(body)+len(sig)+10)
	out = append(out, body[:len(body)-1]...)
	out = append(out, `,"sig":"`...)
	out = append(out, sig...)
	return append(out, `"}`...)
}

func (b *Batch) checkFinite() error {
	bad := func(p *float64) bool { return p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) }
	for i, g := range b.GPS {
		if math.IsNaN(g.Lat) || math.IsNaN(g.Lon) || bad(g.SpeedKmh) || bad(g.CourseDeg) || bad(g.HDOP) || bad(g.AltM) {
			return reject(ReasonNonFinite, "gps[%d]", i)
		}
	}
	for i, r := range b.Tacho {
		if bad(r.SpeedKmh) || bad(r.OdometerKm) {
			return reject(ReasonNonFinite, "tacho[%d]", i)
		}
	}
	for i, s := range b.Sound {
		if bad(s.LAeqDB) || bad(s.LAmaxDB) || bad(s.DurS) {
			return reject(ReasonNonFinite, "sound[%d]", i)
		}
	}
	for i, w := range b.Warnings {
		if bad(w.DistanceM) || bad(w.Value) || bad(w.Limit) {
			return reject(ReasonNonFinite, "warnings[%d]", i)
		}
	}
	return nil
}

var sigMember = []byte(`,"sig":"`)

// SplitSignature finds the signature member at the end of payload. When present (ok), signed
// is the payload without it — the bytes the vehicle signed — and sig the decoded signature.
// A payload with a "sig" member anywhere but last is reported by Decode.
func SplitSignature(payload []byte) (signed, sig []byte, ok bool, err error) {
	p, i, enc := findSig(payload)
	if i < 0 {
		return nil, nil, false, nil
	}
	sig = make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	if err := decodeSig(sig, enc); err != nil {
		return nil, nil, false, err
	}
	signed = make([]byte, 0, i+1)
	signed = append(signed, p[:i]...)
	signed = append(signed, '}')
	return signed, sig[:ed25519.SignatureSize], true, nil
}

// checkSig is the check of SplitSignature without its copies: whether payload ends in a sig
// member, and the error of a malformed one.
func checkSig(payload []byte) (ok bool, err *Error) {
	_, i, enc := findSig(payload)
	if i < 0 {
		return false, nil
	}
	var buf [128]byte
	dst := buf[:]
	if n := base64.StdEncoding.DecodedLen(len(enc)); n > len(buf) {
		dst = make([]byte, n)
	}
	if err := decodeSig(dst, enc); err != nil {
		return false, err
	}
	return true, nil
}

// findSig returns payload without trailing white space, the index in it of the sig member
// (`,"sig":"…"` right before the closing brace), or -1, and the member's base64 text. The value
// holds no quote, so its opening quote is the last one before the closing `"}`.
func findSig(payload []byte) (p []byte, i int, enc []byte) {
	p = bytes.TrimRight(payload, " \t\r\n")
	if !bytes.HasSuffix(p, []byte(`"}`)) {
		return p, -1, nil
	}
	q := bytes.LastIndexByte(p[:len(p)-2], '"')
	i = q + 1 - len(sigMember)
	if i < 0 || !bytes.Equal(p[i:q+1], sigMember) {
		return p, -1, nil // no sig member, or "sig" is not the last member
	}
	return p, i, p[q+1 : len(p)-2]
}

func decodeSig(dst, enc []byte) *Error {
	n, derr := base64.StdEncoding.Decode(dst, enc)
	if derr != nil || n != ed25519.SignatureSize {
		return reject(ReasonBadSignature, "sig is not base64 of %d bytes", ed25519.SignatureSize)
	}
	return nil
}

// Verify checks a signed payload against the vehicle's public key.
func Verify(payload []byte, pub ed25519.PublicKey) error {
	signed, sig, ok, err := SplitSignature(payload)
	if err != nil {
		return err
	}
	if !ok {
		return reject(ReasonUnsigned, "no sig member")
	}
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, signed, sig) {
		return reject(ReasonSignatureFailed, "signature does not verify")
	}
	return nil
}
