package wire

import (
	"bytes"
	"fmt"
	"time"
)

// Time is a device or server time on the wire: RFC 3339 in UTC with at most millisecond
// precision ("2026-11-29T15:00:00.25Z"). The zero Time is "not known".
type Time struct{ time.Time }

// timeLayout writes UTC with up to three fractional digits, trailing zeros dropped.
const timeLayout = "2006-01-02T15:04:05.999Z"

// NewTime truncates t to the millisecond in UTC.
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// String formats the time as on the wire.
func (t Time) String() string { return t.UTC().Format(timeLayout) }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return nil, fmt.Errorf("wire: zero time cannot be encoded; omit the field")
	}
	if t.UTC().Truncate(time.Millisecond) != t.UTC() {
		return nil, fmt.Errorf("wire: time %s has sub-millisecond precision", t.Time.Format(time.RFC3339Nano))
	}
	b := make([]byte, 0, len(timeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON implements json.Unmarshaler. It accepts only RFC 3339 times in UTC ("Z")
// with at most three fractional digits.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return &timeError{"not a string"}
	}
	p, err := ParseTime(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

type timeError struct{ msg string }

func (e *timeError) Error() string { return "time: " + e.msg }

// ParseTime parses a wire time.
func ParseTime(s string) (Time, error) {
	// Shortest valid form is 2006-01-02T15:04:05Z (20 bytes).
	if len(s) < 20 || s[len(s)-1] != 'Z' {
		return Time{}, &timeError{fmt.Sprintf("%q is not RFC 3339 UTC (…Z)", s)}
	}
	if len(s) > 20 {
		if s[19] != '.' || len(s) > 24 || len(s) == 21 {
			return Time{}, &timeError{fmt.Sprintf("%q: at most millisecond precision", s)}
		}
	}
	p, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Time{}, &timeError{fmt.Sprintf("%q: %v", s, err)}
	}
	return Time{p.UTC()}, nil
}
