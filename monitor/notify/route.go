package notify

import (
	"fmt"
	"slices"
	"time"
)

// Address is where a user receives one channel: an e-mail address, a Telegram chat id, a Web
// Push subscription (JSON). A user may have several of one channel (two phones).
type Address struct {
	Channel string // "email", "telegram", "webpush": a key of Config.Channels
	To      string
}

// User is someone who may be notified.
type User struct {
	ID        string // the dashboard's user name
	Addresses []Address
	Prefs     Preferences
}

// Preferences are what a user chose to receive (Perfil → Notificações).
type Preferences struct {
	// Rules, Vehicles and Licensees filter the alerts: an empty list lets every value pass.
	// With both Vehicles and Licensees given, an alert passes when either lists it (a user
	// follows one licensee's fleet and a few vehicles of others).
	Rules     []string
	Vehicles  []string
	Licensees []string
	// MinSeverity drops alerts below it; zero lets all pass.
	MinSeverity Severity
	// Channels are the channels to use among the user's addresses; empty: all of them.
	Channels []string
	// Quiet is the user's quiet hours in the municipality's local time: alerts are not sent
	// then (they stay on the dashboard) unless the user is on duty. Nil: none.
	Quiet *QuietHours
	// OnDutyOnly: notify this user only during their shifts.
	OnDutyOnly bool
}

// Matches reports whether the filters of p let a pass (ignoring quiet hours and duty).
func (p Preferences) Matches(a Alert) bool {
	if a.Severity < p.MinSeverity {
		return false
	}
	if len(p.Rules) > 0 && !slices.Contains(p.Rules, a.Rule) {
		return false
	}
	if len(p.Vehicles) == 0 && len(p.Licensees) == 0 {
		return true
	}
	return slices.Contains(p.Vehicles, a.Vehicle) || (a.Licensee != "" && slices.Contains(p.Licensees, a.Licensee))
}

// uses reports whether the user chose the channel.
func (p Preferences) uses(channel string) bool {
	return len(p.Channels) == 0 || slices.Contains(p.Channels, channel)
}

// QuietHours is a daily interval of local time, From inclusive, To exclusive, as offsets from
// midnight; From after To wraps midnight (22:00–07:00). From equal to To is empty.
type QuietHours struct {
	From, To time.Duration
}

// ParseQuietHours reads "22:00-07:00".
func ParseQuietHours(s string) (QuietHours, error) {
	var fh, fm, th, tm int
	if n, err := fmt.Sscanf(s, "%d:%d-%d:%d", &fh, &fm, &th, &tm); err != nil || n != 4 ||
		fh < 0 || fh > 24 || th < 0 || th > 24 || fm < 0 || fm > 59 || tm < 0 || tm > 59 {
		return QuietHours{}, fmt.Errorf("quiet hours %q: want HH:MM-HH:MM", s)
	}
	return QuietHours{From: time.Duration(fh)*time.Hour + time.Duration(fm)*time.Minute,
		To: time.Duration(th)*time.Hour + time.Duration(tm)*time.Minute}, nil
}

// Covers reports whether t, read in loc, falls in the quiet hours.
func (q QuietHours) Covers(t time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	y, m, d := lt.Date()
	of := lt.Sub(time.Date(y, m, d, 0, 0, 0, 0, loc))
	switch {
	case q.From == q.To:
		return false
	case q.From < q.To:
		return of >= q.From && of < q.To
	}
	return of >= q.From || of < q.To
}

// Shift is one turn of the on-duty schedule (escala de plantão): the user is on call from
// From (inclusive) to To (exclusive).
type Shift struct {
	User     string
	From, To time.Time
}

// Schedule is the on-duty schedule. Shifts may overlap (two inspectors on a busy night).
type Schedule []Shift

// OnDuty lists who is on call at t.
func (s Schedule) OnDuty(t time.Time) []string {
	var out []string
	for _, sh := range s {
		if !t.Before(sh.From) && t.Before(sh.To) && !slices.Contains(out, sh.User) {
			out = append(out, sh.User)
		}
	}
	return out
}
