package testenv

import (
	"testing"
)

func TestComponentsStart(t *testing.T) {
	m := StartMosquitto(t, MosquittoOptions{})
	m.Stop()
	m.Restart(t)
	i := StartInflux(t)
	if n := i.Count(t, "gps", "lat", ""); n != 0 {
		t.Fatalf("empty database has %d points", n)
	}
}
