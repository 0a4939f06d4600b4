// Package complaints handles citizens' complaints about the trains: the complaint as
// the public form or the city's 156/ouvidoria system sends it (ParseInput), the proof-of-work
// challenge that makes flooding the form costly (PoW), the matching of a complaint against the
// telemetry stored in InfluxDB (Matcher, Influx) and the answer in plain Portuguese (Answer).
//
// A match is an indício: the level at the complainant's place is estimated from the vehicle's
// meter with the rules' point-source model (rules.ReceptorLevel), never measured there, and a
// complaint never grounds an auto by itself (docs/process.md).
package complaints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind is what the complaint is about.
type Kind string

// The kinds of complaint.
const (
	KindLoud       Kind = "som_alto"
	KindSpeed      Kind = "velocidade"
	KindOutOfHours Kind = "fora_do_horario"
	KindOther      Kind = "outro"
)

// Kinds lists the kinds in the form's order.
var Kinds = []Kind{KindLoud, KindSpeed, KindOutOfHours, KindOther}

// Label is the kind as people read it.
func (k Kind) Label() string {
	switch k {
	case KindLoud:
		return "som alto"
	case KindSpeed:
		return "velocidade"
	case KindOutOfHours:
		return "fora do horário"
	case KindOther:
		return "outro"
	}
	return string(k)
}

// Input bounds.
const (
	MaxBodyBytes   = 8 << 10 // a whole request body
	MaxTextRunes   = 1000    // the free text
	MaxAddressLen  = 200     // a typed address, in runes
	MaxContactLen  = 254     // an e-mail address (RFC 5321)
	MaxExternalRef = 64      // the 156 protocol number
	// MaxAge is how far back a complaint may be: the telemetry is matched at once, and a
	// complaint about last month is a matter for the ouvidoria, not for this form.
	MaxAge = 7 * 24 * time.Hour
	// MaxAhead tolerates a complainant's clock a little ahead of the server's.
	MaxAhead = 10 * time.Minute
)

// Input is a complaint as received, checked by ParseInput.
type Input struct {
	// Lat and Lon are the place picked on the map (HasPlace), else Address is matched to the
	// streets and landmarks of the geofences by the caller.
	Lat, Lon float64
	HasPlace bool
	Address  string
	At       time.Time
	Kind     Kind
	Text     string
	// Contact is the complainant's e-mail (optional): personal data.
	Contact string
	// ExternalRef is the 156/ouvidoria protocol number (API only).
	ExternalRef string
	// Challenge and Nonce are the form's proof of work (PoW.Verify).
	Challenge string
	Nonce     string
}

// wireInput is the JSON body of POST /api/v1/public/complaints and of the 156 API.
type wireInput struct {
	Lat         *float64 `json:"lat"`
	Lon         *float64 `json:"lon"`
	Address     string   `json:"address"`
	At          string   `json:"at"`
	Kind        string   `json:"kind"`
	Text        string   `json:"text"`
	Contact     string   `json:"contact"`
	ExternalRef string   `json:"external_ref"`
	Challenge   string   `json:"challenge"`
	Nonce       string   `json:"nonce"`
}

// InputError is a complaint refused for what it says; its message is for the complainant
// (pt-BR) and never echoes the input.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func refuse(format string, a ...any) error { return &InputError{Msg: fmt.Sprintf(format, a...)} }

// ParseInput decodes and checks a complaint body. at is read as RFC 3339, or as a local time
// "2006-01-02T15:04" (what an <input type="datetime-local"> sends) in loc; it must lie within
// MaxAge before now and MaxAhead after it. Unknown fields, trailing data, text that is not
// UTF-8 or holds control characters, and anything over the bounds are refused.
func ParseInput(body []byte, now time.Time, loc *time.Location) (*Input, error) {
	if len(body) > MaxBodyBytes {
		return nil, refuse("reclamação grande demais")
	}
	if !utf8.Valid(body) {
		return nil, refuse("texto inválido (não é UTF-8)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var w wireInput
	if err := dec.Decode(&w); err != nil {
		return nil, refuse("reclamação malformada")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse("reclamação malformada")
	}
	in := &Input{Kind: Kind(w.Kind), Challenge: w.Challenge, Nonce: w.Nonce}
	switch in.Kind {
	case KindLoud, KindSpeed, KindOutOfHours, KindOther:
	default:
		return nil, refuse("tipo de reclamação inválido: use som_alto, velocidade, fora_do_horario ou outro")
	}
	if (w.Lat == nil) != (w.Lon == nil) {
		return nil, refuse("local incompleto: informe latitude e longitude")
	}
	if w.Lat != nil {
		lat, lon := *w.Lat, *w.Lon
		if math.IsNaN(lat) || math.IsNaN(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return nil, refuse("local inválido")
		}
		in.Lat, in.Lon, in.HasPlace = lat, lon, true
	}
	var err error
	if in.Address, err = cleanLine(w.Address, MaxAddressLen, "endereço"); err != nil {
		return nil, err
	}
	if !in.HasPlace && in.Address == "" {
		return nil, refuse("informe o local: marque no mapa ou digite o endereço")
	}
	if in.Text, err = cleanText(w.Text); err != nil {
		return nil, err
	}
	if in.ExternalRef, err = cleanLine(w.ExternalRef, MaxExternalRef, "protocolo"); err != nil {
		return nil, err
	}
	if c := strings.TrimSpace(w.Contact); c != "" {
		if len(c) > MaxContactLen {
			return nil, refuse("e-mail longo demais")
		}
		a, err := mail.ParseAddress(c)
		if err != nil || a.Name != "" || a.Address != c || !strings.Contains(c[strings.LastIndexByte(c, '@')+1:], ".") {
			return nil, refuse("e-mail inválido")
		}
		in.Contact = c
	}
	if in.At, err = parseAt(w.At, loc); err != nil {
		return nil, err
	}
	if in.At.Before(now.Add(-MaxAge)) {
		return nil, refuse("horário antigo demais: reclamações dos últimos 7 dias")
	}
	if in.At.After(now.Add(MaxAhead)) {
		return nil, refuse("horário no futuro")
	}
	if len(w.Challenge) > 512 || len(w.Nonce) > MaxNonceLen {
		return nil, refuse("desafio inválido")
	}
	return in, nil
}

func parseAt(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, refuse("informe o horário")
	}
	if len(s) > 40 {
		return time.Time{}, refuse("horário inválido")
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, refuse("horário inválido: use AAAA-MM-DDTHH:MM")
}

// cleanLine trims a one-line field and refuses control characters and more than max runes.
func cleanLine(s string, max int, what string) (string, error) {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		return "", refuse("%s longo demais (até %d caracteres)", what, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return "", refuse("%s com caracteres inválidos", what)
		}
	}
	return s, nil
}

// cleanText trims the free text: line breaks and tabs are kept, other control characters refused.
func cleanText(s string) (string, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if utf8.RuneCountInString(s) > MaxTextRunes {
		return "", refuse("texto longo demais (até %d caracteres)", MaxTextRunes)
	}
	for _, r := range s {
		if (unicode.IsControl(r) && r != '\n' && r != '\t') || r == utf8.RuneError {
			return "", refuse("texto com caracteres inválidos")
		}
	}
	return s, nil
}
