package api

import (
	"reflect"
	"regexp"
	"slices"
	"testing"
)

// FuzzCheckPrefs: a preferences body is untrusted; whatever it holds, checkPrefs never panics,
// and what it accepts is within bounds and already normal (checking it again changes nothing).
func FuzzCheckPrefs(f *testing.F) {
	f.Add("ana@piuma.example", "123456789", "medium", "22:00-07:00", "PIU-001", "speed", "email")
	f.Add("Ana <ana@piuma.example>", "@canal_x", "média", "7:5-24:00", "PIU 001", "flying", "sms")
	f.Add("", "-100123", "", "00:00-00:00", "", "", "")
	f.Add("a@b", "@abc", "ALTA", "24:00-01:00", "L1", "noise_limit", "webpush")
	quiet := regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-4]):[0-5][0-9]$`)
	f.Fuzz(func(t *testing.T, email, telegram, severity, quietHours, vehicle, rule, channel string) {
		in := prefsJSON{Email: email, Telegram: telegram, MinSeverity: severity, QuietHours: quietHours,
			Vehicles: []string{vehicle, vehicle}, Licensees: []string{vehicle}, Rules: []string{rule}, Channels: []string{channel}}
		p, probs := checkPrefs(in, "ana")
		if len(probs) > 0 {
			return
		}
		switch {
		case len(p.Email) > 254, !chatIDRE.MatchString(p.Telegram) && p.Telegram != "",
			p.QuietHours != "" && !quiet.MatchString(p.QuietHours),
			!slices.Contains([]string{"", "low", "medium", "high"}, p.MinSeverity),
			len(p.Vehicles) != 1, !slices.Contains(channelList, p.Channels[0]):
			t.Fatalf("accepted out of bounds: %+v", p)
		}
		again, probs := checkPrefs(toPrefsJSON(p), "ana")
		if len(probs) > 0 || !reflect.DeepEqual(again, p) {
			t.Fatalf("not normal: %+v → %+v %v", p, again, probs)
		}
	})
}
