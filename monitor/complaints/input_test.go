package complaints

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

var (
	testNow = time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	testLoc = time.FixedZone("BRT", -3*3600)
)

func TestParseInput(t *testing.T) {
	in, err := ParseInput([]byte(`{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"som_alto","text":" Música alta\r\nde novo ","contact":"maria@example.com"}`), testNow, testLoc)
	if err != nil {
		t.Fatal(err)
	}
	if !in.HasPlace || in.Lat != -20.84 || in.Kind != KindLoud || in.Text != "Música alta\nde novo" || in.Contact != "maria@example.com" ||
		!in.At.Equal(time.Date(2026, 11, 27, 22, 14, 0, 0, time.UTC)) {
		t.Errorf("%+v", in)
	}
	in, err = ParseInput([]byte(`{"address":"Av. Beira-Mar, 120","at":"2026-11-27T22:14:00Z","kind":"velocidade"}`), testNow, testLoc)
	if err != nil || in.HasPlace || in.Address != "Av. Beira-Mar, 120" {
		t.Errorf("%+v %v", in, err)
	}
	for name, body := range map[string]string{
		"unknown field":  `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro","x":1}`,
		"trailing":       `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro"} {}`,
		"half a place":   `{"lat":-20.84,"at":"2026-11-27T19:14","kind":"outro"}`,
		"no place":       `{"at":"2026-11-27T19:14","kind":"outro"}`,
		"lat range":      `{"lat":-120,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro"}`,
		"kind":           `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"SOM_ALTO"}`,
		"future":         `{"lat":-20.84,"lon":-40.73,"at":"2026-11-28T19:14","kind":"outro"}`,
		"old":            `{"lat":-20.84,"lon":-40.73,"at":"2026-11-01T19:14","kind":"outro"}`,
		"no time":        `{"lat":-20.84,"lon":-40.73,"kind":"outro"}`,
		"contact name":   `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro","contact":"Maria <m@example.com>"}`,
		"contact local":  `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro","contact":"root@localhost"}`,
		"control":        `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro","text":"a\u0000b"}`,
		"address ctl":    `{"address":"Rua\nA","at":"2026-11-27T19:14","kind":"outro"}`,
		"text too long":  `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro","text":"` + strings.Repeat("é", MaxTextRunes+1) + `"}`,
		"not utf8":       "{\"lat\":-20.84,\"lon\":-40.73,\"at\":\"2026-11-27T19:14\",\"kind\":\"outro\",\"text\":\"\xff\"}",
		"body too large": `{"text":"` + strings.Repeat("a", MaxBodyBytes) + `"}`,
		"nonce too long": `{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro","nonce":"` + strings.Repeat("1", MaxNonceLen+1) + `"}`,
		"not an object":  `[1]`,
	} {
		if _, err := ParseInput([]byte(body), testNow, testLoc); err == nil {
			t.Errorf("%s: accepted", name)
		} else if ie := (*InputError)(nil); !errors.As(err, &ie) || strings.Contains(err.Error(), "json") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzParseInput: the body is untrusted. Whatever it holds, ParseInput returns an InputError or
// an input within every bound: a kind of the list, a place in range or an address, a time in
// the accepted window, text without control characters, a contact that is a bare e-mail.
func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		`{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14","kind":"som_alto","text":"Música alta","contact":"maria@example.com"}`,
		`{"address":"Av. Beira-Mar, 120","at":"2026-11-27T22:14:00Z","kind":"velocidade","external_ref":"156-1"}`,
		`{"lat":1e400,"lon":-40.73,"at":"2026-11-27T19:14","kind":"outro"}`,
		`{"lat":-20.84,"lon":-40.73,"at":"2026-11-27T19:14:00-03:00","kind":"fora_do_horario","challenge":"x.y","nonce":"7"}`,
		`{"lat":null,"lon":null,"address":" ","at":"","kind":""}`,
		`{}`, `null`, `"x"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := ParseInput(body, testNow, testLoc)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Msg == "" || !utf8.ValidString(ie.Msg) {
				t.Fatalf("error %v", err)
			}
			if len(body) >= 8 && strings.Contains(ie.Msg, string(body)) {
				t.Fatalf("the error echoes the input: %q", ie.Msg)
			}
			return
		}
		switch in.Kind {
		case KindLoud, KindSpeed, KindOutOfHours, KindOther:
		default:
			t.Fatalf("kind %q", in.Kind)
		}
		if in.HasPlace && (in.Lat < -90 || in.Lat > 90 || in.Lon < -180 || in.Lon > 180 || in.Lat != in.Lat) {
			t.Fatalf("place %v %v", in.Lat, in.Lon)
		}
		if !in.HasPlace && in.Address == "" {
			t.Fatal("no place and no address")
		}
		if in.At.Before(testNow.Add(-MaxAge)) || in.At.After(testNow.Add(MaxAhead)) {
			t.Fatalf("time %v", in.At)
		}
		if utf8.RuneCountInString(in.Text) > MaxTextRunes || utf8.RuneCountInString(in.Address) > MaxAddressLen ||
			len(in.Contact) > MaxContactLen || utf8.RuneCountInString(in.ExternalRef) > MaxExternalRef || len(in.Nonce) > MaxNonceLen {
			t.Fatalf("bounds: %+v", in)
		}
		for _, s := range []string{in.Text, in.Address, in.ExternalRef} {
			for _, r := range s {
				if unicode.IsControl(r) && r != '\n' && r != '\t' || r == utf8.RuneError {
					t.Fatalf("control character in %q", s)
				}
			}
		}
		if strings.ContainsAny(in.Address+in.ExternalRef, "\n\t") {
			t.Fatalf("line break in a one-line field: %+v", in)
		}
		if in.Contact != "" && (strings.ContainsAny(in.Contact, " <>\"\n") || strings.Count(in.Contact, "@") < 1) {
			t.Fatalf("contact %q", in.Contact)
		}
		// A parsed input survives a round trip through the wire form.
		b, _ := json.Marshal(wireInput{Lat: ptrIf(in.HasPlace, in.Lat), Lon: ptrIf(in.HasPlace, in.Lon), Address: in.Address,
			At: in.At.Format(time.RFC3339Nano), Kind: string(in.Kind), Text: in.Text, Contact: in.Contact, ExternalRef: in.ExternalRef,
			Challenge: in.Challenge, Nonce: in.Nonce})
		again, err := ParseInput(b, testNow, testLoc)
		if err != nil || again.Text != in.Text || again.Contact != in.Contact || !again.At.Equal(in.At) || again.Address != in.Address {
			t.Fatalf("round trip: %+v → %+v (%v)", in, again, err)
		}
	})
}

func ptrIf(ok bool, v float64) *float64 {
	if !ok {
		return nil
	}
	return &v
}
