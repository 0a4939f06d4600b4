package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// TestLoadTestAgainstIngest runs a small load through Mosquitto and ingest (in-process) into
// InfluxDB 1.8 and checks that the tool sees every batch stored.
func TestLoadTestAgainstIngest(t *testing.T) {
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	db := testenv.StartInflux(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	reg := prometheus.NewRegistry()
	go func() {
		done <- archive.Run(ctx, archive.Settings{
			MQTT:   archive.MQTTConfig{MQTT: config.MQTT{URL: broker.URL()}, ClientID: "ingest-load"},
			Influx: archive.InfluxConfig{Influx: config.Influx{URL: db.URL(), Bucket: "trenzinho"}},
		}, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	for deadline := time.Now().Add(time.Minute); !subscribed(t, reg); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ingest did not subscribe")
		}
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	var out, errOut bytes.Buffer
	args := []string{"--mqtt-url", broker.URL(), "--influx-url", db.URL(), "--influx-bucket", "trenzinho",
		"--vehicles", "5", "--batches", "20", "--gps", "10", "--tacho", "2", "--sound", "10", "--timeout", "1m"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !regexp.MustCompile(`^100 batches, 2300 points, .* stored in `).MatchString(out.String()) {
		t.Errorf("report %q", out.String())
	}
	if n := db.Count(t, "gps", "lat", ""); n != 100*10 {
		t.Errorf("%d gps points, want 1000", n)
	}
}

func subscribed(t *testing.T, reg *prometheus.Registry) bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "trenzinho_ingest_mqtt_up" {
			return mf.GetMetric()[0].GetGauge().GetValue() == 1
		}
	}
	return false
}
