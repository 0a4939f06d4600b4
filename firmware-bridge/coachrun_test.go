package main

import "testing"

// TestCoachPageListenNeedsToken: the status page is served without a login only on loopback;
// any other address needs a token, or the bridge refuses to start.
func TestCoachPageListenNeedsToken(t *testing.T) {
	for _, c := range []struct {
		listen, token string
		ok            bool
	}{
		{"127.0.0.1:8088", "", true},
		{"[::1]:8088", "", true},
		{"localhost:8088", "", true},
		{"", "", true},
		{"0.0.0.0:8088", "", false},
		{":8088", "", false},
		{"192.168.4.1:8088", "", false},
		{"0.0.0.0:8088", "s3cret", true},
		{"8088", "", false},
	} {
		f := coachFlags{on: true, listen: c.listen, token: c.token}
		if err := f.check(); (err == nil) != c.ok {
			t.Errorf("listen %q token %q: %v, want ok %v", c.listen, c.token, err, c.ok)
		}
	}
}
