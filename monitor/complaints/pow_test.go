package complaints

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func solve(t testing.TB, c Challenge) string {
	t.Helper()
	for n := 0; n < 1<<24; n++ {
		nonce := fmt.Sprint(n)
		if LeadingZeroBits(c.Challenge, nonce) >= c.Difficulty {
			return nonce
		}
	}
	t.Fatal("no nonce found")
	return ""
}

// A solved challenge is accepted once; a second use, a wrong nonce, an expired challenge, a
// forged or altered one and another server's are refused with their own errors.
func TestPoW(t *testing.T) {
	now := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	p := NewPoW(8, time.Minute, func() time.Time { return now })
	c := p.Issue()
	if c.Difficulty != 8 || !c.Expires.Equal(now.Add(time.Minute)) || len(c.Challenge) != maxChallengeLen {
		t.Fatalf("challenge %+v", c)
	}
	nonce := solve(t, c)
	// A nonce that does not reach the difficulty.
	for n := 0; ; n++ {
		bad := fmt.Sprint("x", n)
		if LeadingZeroBits(c.Challenge, bad) < 8 {
			if err := p.Verify(c.Challenge, bad); !errors.Is(err, ErrPoWUnsolved) {
				t.Errorf("unsolved: %v", err)
			}
			break
		}
	}
	if err := p.Verify(c.Challenge, nonce); err != nil {
		t.Fatalf("solved: %v", err)
	}
	if err := p.Verify(c.Challenge, nonce); !errors.Is(err, ErrPoWUsed) {
		t.Errorf("second use: %v", err)
	}

	// Altered: the difficulty lowered in the payload (the MAC no longer matches).
	c2 := p.Issue()
	enc, sig, _ := strings.Cut(c2.Challenge, ".")
	pl, _ := b64.DecodeString(enc)
	pl[24] = 0
	if err := p.Verify(b64.EncodeToString(pl)+"."+sig, "0"); !errors.Is(err, ErrPoWMalformed) {
		t.Errorf("altered difficulty: %v", err)
	}
	// Another server's (another key).
	other := NewPoW(8, time.Minute, func() time.Time { return now })
	c3 := other.Issue()
	if err := p.Verify(c3.Challenge, solve(t, c3)); !errors.Is(err, ErrPoWMalformed) {
		t.Errorf("another key: %v", err)
	}
	// Expired.
	c4 := p.Issue()
	n4 := solve(t, c4)
	now = now.Add(time.Minute)
	if err := p.Verify(c4.Challenge, n4); !errors.Is(err, ErrPoWExpired) {
		t.Errorf("expired: %v", err)
	}
	for _, in := range [][2]string{{"", "1"}, {c2.Challenge, ""}, {c2.Challenge, strings.Repeat("1", MaxNonceLen+1)},
		{strings.Repeat("a", maxChallengeLen), "1"}, {c2.Challenge + "x", "1"}, {strings.Repeat("a", 1<<20), "1"}} {
		if err := p.Verify(in[0], in[1]); !errors.Is(err, ErrPoWMalformed) {
			t.Errorf("malformed %.20q/%.20q: %v", in[0], in[1], err)
		}
	}
}

// Concurrent submissions of one solution: exactly one is accepted.
func TestPoWSingleUseConcurrent(t *testing.T) {
	p := NewPoW(4, 0, nil)
	c := p.Issue()
	nonce := solve(t, c)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.Verify(c.Challenge, nonce) == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok != 1 {
		t.Errorf("%d of 50 accepted, want 1", ok)
	}
}

// Spent challenges are forgotten once expired, so memory stays bounded: with the table full of
// live ones, a new solution is refused (busy), and after they expire it is accepted.
func TestPoWMemoryBounded(t *testing.T) {
	now := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	p := NewPoW(1, time.Minute, func() time.Time { return now })
	for i := range maxOutstanding {
		var id [16]byte
		id[0], id[1], id[2] = byte(i), byte(i>>8), byte(i>>16)
		p.used[id] = now.Add(time.Minute)
	}
	c := p.Issue()
	nonce := solve(t, c)
	if err := p.Verify(c.Challenge, nonce); !errors.Is(err, ErrPoWBusy) {
		t.Fatalf("full table: %v", err)
	}
	now = now.Add(time.Minute) // the spent ones expire; so does c: issue another
	c = p.Issue()
	if err := p.Verify(c.Challenge, solve(t, c)); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if len(p.used) != 1 {
		t.Errorf("%d spent challenges remembered, want 1", len(p.used))
	}
}

// LeadingZeroBits counts the bits of the digest the form's script computes; over many nonces
// the share that reaches d bits is 2^-d (the expected work doubles per bit).
func TestLeadingZeroBits(t *testing.T) {
	// Computed independently (Python's hashlib): SHA-256("a:b") starts with one zero bit,
	// SHA-256("trenzinho:1862") with twelve — the first nonce of "trenzinho" to reach 12.
	for _, tc := range []struct {
		c, n string
		want int
	}{{"a", "b", 1}, {"trenzinho", "1862", 12}} {
		if got := LeadingZeroBits(tc.c, tc.n); got != tc.want {
			t.Errorf("LeadingZeroBits(%q, %q) = %d, want %d", tc.c, tc.n, got, tc.want)
		}
	}
	// Over many nonces, about half reach 1 bit, a quarter 2 bits.
	n1, n2 := 0, 0
	for i := range 4000 {
		z := LeadingZeroBits("c", fmt.Sprint(i))
		if z >= 1 {
			n1++
		}
		if z >= 2 {
			n2++
		}
	}
	if n1 < 1800 || n1 > 2200 || n2 < 800 || n2 > 1200 {
		t.Errorf("≥1 bit: %d, ≥2 bits: %d of 4000", n1, n2)
	}
}

// FuzzPoWVerify: the challenge and the nonce come from anyone. Whatever they hold, Verify
// answers one of its errors without panicking, and accepts nothing this server did not issue.
func FuzzPoWVerify(f *testing.F) {
	p := NewPoW(1, time.Minute, nil)
	c := p.Issue()
	f.Add(c.Challenge, "0")
	f.Add(c.Challenge[:len(c.Challenge)-1]+"A", "1")
	f.Add("", "")
	f.Add(".", "x")
	f.Add(strings.Repeat("A", maxChallengeLen), "7")
	f.Fuzz(func(t *testing.T, challenge, nonce string) {
		err := p.Verify(challenge, nonce)
		if err == nil {
			if challenge != c.Challenge {
				t.Fatalf("accepted a challenge the server did not issue: %q", challenge)
			}
			return
		}
		for _, known := range []error{ErrPoWMalformed, ErrPoWExpired, ErrPoWUnsolved, ErrPoWUsed, ErrPoWBusy} {
			if errors.Is(err, known) {
				return
			}
		}
		t.Fatalf("unknown error %v", err)
	})
}
