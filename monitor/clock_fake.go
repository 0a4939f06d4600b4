//go:build fakeclock

package main

import (
	"fmt"
	"os"
	"time"
)

// clock returns the clock TRENZINHO_FAKE_NOW sets: that instant at the monitor's start,
// advancing with the real clock's monotonic reading; the real clock when it is unset.
func clock() (func() time.Time, error) {
	v := os.Getenv(fakeNowEnv)
	if v == "" {
		return time.Now, nil
	}
	start, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fakeNowEnv, err)
	}
	t0 := time.Now()
	return func() time.Time { return start.Add(time.Since(t0)) }, nil
}
