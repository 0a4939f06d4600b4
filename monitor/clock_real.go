//go:build !fakeclock

package main

import (
	"fmt"
	"os"
	"time"
)

// clock returns the real clock. A set TRENZINHO_FAKE_NOW is an error rather than ignored: a
// monitor started as if at another time must not run quietly at this one.
func clock() (func() time.Time, error) {
	if v := os.Getenv(fakeNowEnv); v != "" {
		return nil, fmt.Errorf("%s=%q: this monitor was built without the fakeclock tag and runs on the real clock only", fakeNowEnv, v)
	}
	return time.Now, nil
}
