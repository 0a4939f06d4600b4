package registry

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// A Date is a calendar day, with no time of day or zone: a document is valid through the whole
// of its last day. The zero Date means "not known" and is omitted from YAML and JSON.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses a date written YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("data %q inválida (use AAAA-MM-DD)", s)
	}
	return DateOf(t), nil
}

// MustDate parses a date written YYYY-MM-DD and panics if it cannot; for tests and constants.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DateOf is the calendar day of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// IsZero reports whether d is the zero Date ("not known").
func (d Date) IsZero() bool { return d == Date{} }

// String writes d as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	return d.utc().Compare(e.utc())
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// AddDays is the date n days after d (before, for a negative n).
func (d Date) AddDays(n int) Date { return DateOf(d.utc().AddDate(0, 0, n)) }

// DaysUntil is the number of days from d to e: 0 on the same day, negative when e is before d.
func (d Date) DaysUntil(e Date) int {
	return int(e.utc().Sub(d.utc()) / (24 * time.Hour))
}

// utc is the start of d in UTC, where every day has 24 hours.
func (d Date) utc() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// MarshalText writes d as YYYY-MM-DD (JSON strings).
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads YYYY-MM-DD; the empty string is the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML writes d as a plain YYYY-MM-DD scalar.
func (d Date) MarshalYAML() (any, error) {
	if d.IsZero() {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: d.String()}, nil
}

// UnmarshalYAML reads a YYYY-MM-DD scalar, quoted or not.
func (d *Date) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("linha %d: data: use AAAA-MM-DD", n.Line)
	}
	if n.Tag == "!!null" {
		*d = Date{}
		return nil
	}
	v, err := ParseDate(n.Value)
	if err != nil {
		return fmt.Errorf("linha %d: %w", n.Line, err)
	}
	*d = v
	return nil
}
