package wire

import (
	"fmt"
	"time"
)

// Defaults of Limits (docs/protocol.md §3).
const (
	// DefaultMaxAge is how long after a reading the monitor and ingest still take it: a bridge
	// that was offline longer than this has its spool judged by nobody (TRENZINHO_MAX_AGE).
	DefaultMaxAge = 30 * 24 * time.Hour
	// DefaultMaxAhead is how far ahead of its receipt a device time may be: more is a clock
	// fault, not a reading (TRENZINHO_MAX_AHEAD).
	DefaultMaxAhead = 10 * time.Minute
)

// Earliest and Latest bound every time on the wire, whatever the limits: a time outside them is
// a broken clock (the GPS week rollover gives 1999 or 2019; a zeroed RTC gives 1970), and
// InfluxDB's nanosecond timestamps end in 2262.
var (
	Earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	Latest   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Limits bound the device times of a batch relative to its receipt: every time must lie within
// [receivedAt − MaxAge, receivedAt + MaxAhead] and within [Earliest, Latest). Ingest and the
// monitor read both from the same settings (config.BindLimits), so that they accept exactly
// the same batches.
type Limits struct {
	MaxAge   time.Duration
	MaxAhead time.Duration
}

// DefaultLimits are the limits of the documented defaults.
var DefaultLimits = Limits{MaxAge: DefaultMaxAge, MaxAhead: DefaultMaxAhead}

// withDefaults fills zero fields with the defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxAge <= 0 {
		l.MaxAge = DefaultMaxAge
	}
	if l.MaxAhead <= 0 {
		l.MaxAhead = DefaultMaxAhead
	}
	return l
}

// Validate reports limits that cannot be right.
func (l Limits) Validate() error {
	if l.MaxAge <= 0 || l.MaxAhead <= 0 {
		return fmt.Errorf("wire: max_age %s and max_ahead %s must be positive", l.MaxAge, l.MaxAhead)
	}
	if l.MaxAhead > 24*time.Hour {
		return fmt.Errorf("wire: max_ahead %s above 24h would let a clock fault switch off the rules", l.MaxAhead)
	}
	return nil
}

// window returns the bounds of the times accepted at receivedAt (a zero receivedAt: only
// Earliest and Latest).
func (l Limits) window(receivedAt time.Time) (lo, hi time.Time) {
	lo, hi = Earliest, Latest
	if receivedAt.IsZero() {
		return lo, hi
	}
	l = l.withDefaults()
	if t := receivedAt.Add(-l.MaxAge); t.After(lo) {
		lo = t
	}
	if t := receivedAt.Add(l.MaxAhead); t.Before(hi) {
		hi = t
	}
	return lo, hi
}
