package api

import (
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// FuzzParseMonth: ?month= is untrusted; whatever it holds, a month accepted is a whole calendar
// month in the registry's time zone, from 2000 to the current one.
func FuzzParseMonth(f *testing.F) {
	for _, s := range []string{"", "2026-11", "2026-13", "1999-12", "2999-01", "2026-1", "26-11", "2026-11-01", "+2026-11", "２０２６-11"} {
		f.Add(s)
	}
	loc := time.FixedZone("BRT", -3*3600)
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, month string) {
		r := httptest.NewRequest("GET", "/api/v1/public/transparency?month="+url.QueryEscape(month), nil)
		from, to, ok := parseMonth(r, loc, now)
		if !ok {
			return
		}
		if from.Day() != 1 || from.Hour() != 0 || from.Minute() != 0 || from.Location() != loc || !to.Equal(from.AddDate(0, 1, 0)) {
			t.Fatalf("%q: [%v, %v)", month, from, to)
		}
		if from.Year() < 2000 || from.After(now) {
			t.Fatalf("%q: %v out of range", month, from)
		}
		if month != "" && from.Format("2006-01") != month {
			t.Fatalf("%q read as %v", month, from)
		}
	})
}
