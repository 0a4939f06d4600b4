package complaints

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/bits"
	"strings"
	"sync"
	"time"
)

// The proof of work of the public form: the server issues a challenge — an expiry, a random
// value and a difficulty, signed with an HMAC key only the server knows — and the browser finds
// a nonce such that SHA-256(challenge ":" nonce) starts with Difficulty zero bits (2^Difficulty
// hashes on average: about a second in a phone's browser at the default 16). The server checks
// it with one HMAC and one SHA-256 over bounded input, whatever the client sends, and accepts
// each challenge once. No third party is involved.

// PoW defaults and bounds.
const (
	DefaultDifficulty = 16
	DefaultPoWTTL     = 10 * time.Minute
	MaxNonceLen       = 32
	// maxOutstanding bounds the spent challenges remembered (until they expire): past it, new
	// solutions are refused until some expire, so that memory stays bounded under a flood.
	maxOutstanding = 200_000
)

// Proof-of-work errors.
var (
	ErrPoWMalformed = errors.New("desafio inválido")
	ErrPoWExpired   = errors.New("desafio expirado: recarregue a página")
	ErrPoWUnsolved  = errors.New("prova de trabalho incorreta")
	ErrPoWUsed      = errors.New("desafio já utilizado")
	ErrPoWBusy      = errors.New("muitas reclamações em andamento: tente de novo em alguns minutos")
)

// PoW issues and verifies the form's challenges. It is safe for concurrent use.
type PoW struct {
	key        []byte
	difficulty int
	ttl        time.Duration
	now        func() time.Time

	mu   sync.Mutex
	used map[[16]byte]time.Time // random value → expiry
}

// NewPoW returns a PoW with a fresh random key (challenges do not survive a restart, which
// only costs an open form a reload), the difficulty in leading zero bits (0: DefaultDifficulty;
// at most 32) and the challenges' lifetime (0: DefaultPoWTTL). now is the clock (nil: time.Now).
func NewPoW(difficulty int, ttl time.Duration, now func() time.Time) *PoW {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if difficulty <= 0 {
		difficulty = DefaultDifficulty
	}
	difficulty = min(difficulty, 32)
	if ttl <= 0 {
		ttl = DefaultPoWTTL
	}
	if now == nil {
		now = time.Now
	}
	return &PoW{key: key, difficulty: difficulty, ttl: ttl, now: now, used: map[[16]byte]time.Time{}}
}

// Challenge is what the form receives.
type Challenge struct {
	Challenge  string    `json:"challenge"`
	Difficulty int       `json:"difficulty"`
	Expires    time.Time `json:"expires"`
}

// payload: expiry (unix seconds, 8 bytes) | random (16) | difficulty (1).
const payloadLen = 8 + 16 + 1

var b64 = base64.RawURLEncoding

// Issue returns a new challenge.
func (p *PoW) Issue() Challenge {
	exp := p.now().Add(p.ttl).Truncate(time.Second)
	var pl [payloadLen]byte
	binary.BigEndian.PutUint64(pl[:8], uint64(exp.Unix()))
	_, _ = rand.Read(pl[8:24])
	pl[24] = byte(p.difficulty)
	return Challenge{Challenge: b64.EncodeToString(pl[:]) + "." + b64.EncodeToString(p.mac(pl[:])), Difficulty: p.difficulty, Expires: exp}
}

func (p *PoW) mac(b []byte) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write(b)
	return m.Sum(nil)
}

// maxChallengeLen is the length of an issued challenge: longer input is refused unread.
var maxChallengeLen = b64.EncodedLen(payloadLen) + 1 + b64.EncodedLen(sha256.Size)

// Verify checks a solved challenge and spends it.
func (p *PoW) Verify(challenge, nonce string) error {
	if len(challenge) != maxChallengeLen || nonce == "" || len(nonce) > MaxNonceLen {
		return ErrPoWMalformed
	}
	enc, sig, ok := strings.Cut(challenge, ".")
	if !ok {
		return ErrPoWMalformed
	}
	pl, err1 := b64.DecodeString(enc)
	mac, err2 := b64.DecodeString(sig)
	if err1 != nil || err2 != nil || len(pl) != payloadLen || !hmac.Equal(mac, p.mac(pl)) {
		return ErrPoWMalformed
	}
	now := p.now()
	exp := time.Unix(int64(binary.BigEndian.Uint64(pl[:8])), 0)
	if !now.Before(exp) {
		return ErrPoWExpired
	}
	if LeadingZeroBits(challenge, nonce) < int(pl[24]) {
		return ErrPoWUnsolved
	}
	var id [16]byte
	copy(id[:], pl[8:24])
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, spent := p.used[id]; spent {
		return ErrPoWUsed
	}
	if len(p.used) >= maxOutstanding {
		for k, e := range p.used {
			if !now.Before(e) {
				delete(p.used, k)
			}
		}
		if len(p.used) >= maxOutstanding {
			return ErrPoWBusy
		}
	}
	p.used[id] = exp
	return nil
}

// LeadingZeroBits is the number of leading zero bits of SHA-256(challenge ":" nonce): the
// work the form does (static/js/reclamacao.js computes the same).
func LeadingZeroBits(challenge, nonce string) int {
	h := sha256.New()
	h.Write([]byte(challenge))
	h.Write([]byte{':'})
	h.Write([]byte(nonce))
	sum := h.Sum(nil)
	n := 0
	for _, b := range sum {
		if b != 0 {
			return n + bits.LeadingZeros8(b)
		}
		n += 8
	}
	return n
}
