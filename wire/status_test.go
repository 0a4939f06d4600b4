package wire

import (
	"crypto/ed25519"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDecodeStatus(t *testing.T) {
	ok := []string{
		`{"online":false}`,
		`{"online":true,"version":"1.2.0","epoch":"e-7f3a9c","seq":1042,"spool_depth":0,"spool_evicted":0,"devices":{"gps":"ok","tacho":"ok","slm":"ok"},"t":"2026-11-29T15:00:10Z"}`,
	}
	for _, p := range ok {
		if _, err := DecodeStatus([]byte(p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	bad := map[string]Reason{
		`[]`:               ReasonBadJSON,
		`{"online":"yes"}`: ReasonBadJSON,
		`{"online":true,"seq":9223372036854775808}`: ReasonBadSeq,
		`{"online":true,"epoch":"a b"}`:             ReasonMissingEpoch,
		`{"online":true,"spool_depth":-1}`:          ReasonBadValue,
		`{"online":true,"sig":"AAAA"}`:              ReasonBadSignature,
		`{"online":true,"t":"1970-01-01"}`:          ReasonBadTime,
		"{\"online\":true,\"version\":\"\xff\"}":    ReasonNotUTF8,
		`{"online":true,"devices":{` + strings.Repeat(`"d":"ok",`, 3) + `"e":"` + strings.Repeat("x", 65) + `"}}`: ReasonBadValue,
		`{"online":true,"version":"` + strings.Repeat("v", MaxStatusBytes) + `"}`:                                 ReasonTooLarge,
	}
	for p, want := range bad {
		if _, err := DecodeStatus([]byte(p)); ReasonOf(err) != want {
			t.Errorf("%.60s: %v, want %s", p, err, want)
		}
	}
	s := &Status{Online: true, Version: "1.2.0", Kid: "k1"}
	p, err := EncodeStatus(s, testKey)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeStatus(p)
	if err != nil || got.Kid != "k1" || Verify(p, testKey.Public().(ed25519.PublicKey)) != nil {
		t.Errorf("signed status: %v %+v", err, got)
	}
}

// FuzzDecodeStatus: DecodeStatus never panics, refuses with a listed reason, and what it
// accepts respects its bounds.
func FuzzDecodeStatus(f *testing.F) {
	f.Add([]byte(`{"online":false}`))
	f.Add([]byte(`{"online":true,"version":"1.2.0","epoch":"e-7f3a9c","seq":1042,"spool_depth":0,"devices":{"gps":"ok"},"t":"2026-11-29T15:00:10Z","kid":"k","sig":"` + strings.Repeat("A", 86) + `=="}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		s, err := DecodeStatus(payload)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) || !slices.Contains(Reasons, we.Reason) || s != nil {
				t.Fatalf("error %v (%T), status %v", err, err, s)
			}
			return
		}
		if s.Seq > MaxSeq || len(s.Devices) > MaxDevices || len(s.Kid) > MaxKidLen || (s.SpoolDepth != nil && *s.SpoolDepth < 0) {
			t.Fatalf("accepted %+v", s)
		}
	})
}
