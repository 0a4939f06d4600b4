//go:build !fakeclock

package main

import (
	"strings"
	"testing"
	"time"
)

// A production build refuses a fake clock rather than running quietly on the real one.
func TestProductionBuildRefusesFakeNow(t *testing.T) {
	t.Setenv(fakeNowEnv, "2026-12-31T23:30:00-03:00")
	if _, err := clock(); err == nil || !strings.Contains(err.Error(), "fakeclock") {
		t.Fatalf("clock() with %s set: %v, want an error naming the fakeclock tag", fakeNowEnv, err)
	}
	t.Setenv(fakeNowEnv, "")
	now, err := clock()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(now()).Abs(); d > time.Minute {
		t.Fatalf("the real clock is %v away from time.Now", d)
	}
}
