package wire

import (
	"regexp"
	"testing"
)

// The specification of the ids: ValidVehicle and validEpoch check them by hand.
var (
	vehicleSpec = regexp.MustCompile(`^[A-Za-z0-9-][A-Za-z0-9_-]{0,31}$`)
	epochSpec   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

func checkIDs(t *testing.T, s string) {
	t.Helper()
	if got, want := ValidVehicle(s), vehicleSpec.MatchString(s); got != want {
		t.Errorf("ValidVehicle(%q) = %v, the regular expression says %v", s, got, want)
	}
	if got, want := validEpoch(s), epochSpec.MatchString(s); got != want {
		t.Errorf("validEpoch(%q) = %v, the regular expression says %v", s, got, want)
	}
}

var idCases = []string{
	"", "a", "_", "-", ".", "PIU-001", "_sys", "a_b", "a.b", "a b", "a/b", "a+", "é", "A\x00",
	"abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz0123456", "-_-", "e-load",
	"0123456789012345678901234567890123456789012345678901234567890123",
	"01234567890123456789012345678901234567890123456789012345678901234", "ABC\n", "ok\xff",
}

func TestIDsAsSpecified(t *testing.T) {
	for _, s := range idCases {
		checkIDs(t, s)
	}
}

func FuzzIDs(f *testing.F) {
	for _, s := range idCases {
		f.Add(s)
	}
	f.Fuzz(checkIDs)
}
