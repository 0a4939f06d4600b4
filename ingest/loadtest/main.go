// Loadtest measures an MQTT → InfluxDB archiver end to end: it publishes the batches of a
// simulated fleet to the broker with QoS 1, as fast as it can (or at --rate), and counts in
// InfluxDB, with Flux, until every batch is stored. It reports publish and store throughput.
//
// It drives ingest (the default counts the batch measurement of docs/storage.md) or a peer such
// as Telegraf (--measurement, --field and --tag name what that peer writes for each batch).
//
// `loadtest bench` is the comparative benchmark of docs/benchmarks.md: it starts its own
// Mosquitto (the repository's configuration) and InfluxDB 1.8, and runs the same load through
// ingest, Telegraf and a bare influxdb-client-go writer one after the other (bench.go).
//
// Usage:
//
//	loadtest [flags]
//	loadtest bench [flags]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// load is the simulated fleet: every vehicle sends batches batches of 5 s.
type load struct {
	vehicles int
	batches  int // per vehicle
	gps      int // readings per batch
	tacho    int
	sound    int
}

// readings is the number of readings of the whole load.
func (l load) readings() int { return l.vehicles * l.batches * (l.gps + l.tacho + l.sound) }

// options of one load test.
type options struct {
	load
	mqtt        config.MQTT
	influx      config.Influx
	rate        float64 // batches per second, 0: unlimited
	window      int     // QoS 1 publishes in flight
	measurement string
	field       string
	tag         string
	timeout     time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "bench":
			return runBench(ctx, args[1:], stdout, stderr)
		case bareWriterCommand:
			return runBareWriter(ctx, args[1:], os.Stdin, stdout, stderr)
		case sinkCommand:
			return runSink(ctx, args[1:], os.Stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	b := config.NewBinder(fs)
	b.BindMQTT(&o.mqtt)
	b.BindInflux(&o.influx)
	fs.IntVar(&o.vehicles, "vehicles", 20, "vehicles of the simulated fleet")
	fs.IntVar(&o.batches, "batches", 100, "batches per vehicle")
	fs.IntVar(&o.gps, "gps", 50, "GPS readings per batch (10 Hz over 5 s)")
	fs.IntVar(&o.tacho, "tacho", 5, "tachograph readings per batch")
	fs.IntVar(&o.sound, "sound", 50, "sound readings per batch")
	fs.Float64Var(&o.rate, "rate", 0, "batches per second to publish (0: as fast as the broker takes them)")
	fs.IntVar(&o.window, "window", 500, "QoS 1 publishes awaiting their PUBACK")
	fs.StringVar(&o.measurement, "measurement", archive.MeasurementBatch, "measurement holding one point per stored batch")
	fs.StringVar(&o.field, "field", "seq", "field of that measurement present in every point")
	fs.StringVar(&o.tag, "tag", "vehicle", "tag holding the vehicle id")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up waiting for the batches after this long")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: loadtest [flags]\n       loadtest bench [flags] (loadtest bench --help)\n\n"+
			"Publishes a simulated fleet's batches and measures how fast they are stored in InfluxDB.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := b.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "loadtest:", err)
		return 2
	}
	if o.influx.URL == "" || o.vehicles < 1 || o.batches < 1 || o.window < 1 {
		fmt.Fprintln(stderr, "loadtest: --influx-url is required; --vehicles, --batches and --window must be positive")
		return 2
	}
	r, err := loadTest(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "loadtest:", err)
		return 1
	}
	fmt.Fprintln(stdout, r)
	return 0
}

// report is the outcome of a run.
type report struct {
	batches, points, bytes int
	publish, store         time.Duration
}

func (r report) String() string {
	return fmt.Sprintf("%d batches, %d points, %.1f MB: published in %s (%.0f batches/s); stored in %s (%.0f batches/s, %.0f points/s)",
		r.batches, r.points, float64(r.bytes)/1e6, r.publish.Round(time.Millisecond), float64(r.batches)/r.publish.Seconds(),
		r.store.Round(time.Millisecond), float64(r.batches)/r.store.Seconds(), float64(r.points)/r.store.Seconds())
}

func loadTest(ctx context.Context, o options, progress io.Writer) (report, error) {
	id := make([]byte, 3)
	rand.Read(id)
	prefix := "LT" + hex.EncodeToString(id) + "-"
	base := time.Now().Add(-time.Duration(o.batches)*5*time.Second - time.Hour).Truncate(time.Second)
	msgs, r, err := fleet(o.load, prefix, base)
	if err != nil {
		return r, err
	}

	db, err := archive.OpenInflux(ctx, archive.InfluxConfig{Influx: o.influx})
	if err != nil {
		return r, err
	}
	db.Close()
	client := influxdb2.NewClient(o.influx.URL, o.influx.Token)
	defer client.Close()
	query := fmt.Sprintf(`from(bucket: %q)
  |> range(start: %s, stop: %s)
  |> filter(fn: (r) => r._measurement == %q and r._field == %q and r[%q] =~ /^%s/)
  |> group()
  |> count()`, db.Bucket, base.Add(-time.Hour).Format(time.RFC3339), time.Now().Add(time.Hour).Format(time.RFC3339),
		o.measurement, o.field, o.tag, prefix)
	count := func() (int, error) {
		res, err := client.QueryAPI(o.influx.Org).Query(ctx, query)
		if err != nil {
			return 0, fmt.Errorf("count stored batches: %w", err)
		}
		defer res.Close()
		n := 0
		for res.Next() {
			if v, ok := res.Record().Value().(int64); ok {
				n += int(v)
			}
		}
		return n, res.Err()
	}
	if _, err := count(); err != nil {
		return r, err
	}

	opts := mqtt.NewClientOptions().AddBroker(o.mqtt.URL).SetClientID("trenzinho-loadtest-" + prefix).
		SetUsername(o.mqtt.User).SetPassword(o.mqtt.Password).SetCleanSession(true).SetOrderMatters(false)
	pub := mqtt.NewClient(opts)
	if tok := pub.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		return r, fmt.Errorf("connect to %s: %v", o.mqtt.URL, tok.Error())
	}
	defer pub.Disconnect(250)

	start := time.Now()
	if err := publish(ctx, pub, msgs, o.rate, o.window); err != nil {
		return r, err
	}
	r.publish = time.Since(start)
	fmt.Fprintf(progress, "published %d batches in %s\n", r.batches, r.publish.Round(time.Millisecond))

	deadline := time.Now().Add(o.timeout)
	for {
		n, err := count()
		if err != nil {
			return r, err
		}
		if n >= r.batches {
			r.store = time.Since(start)
			if n > r.batches {
				return r, fmt.Errorf("%d batches stored, %d published", n, r.batches)
			}
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("%d of %d batches stored after %s", n, r.batches, o.timeout)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type message struct {
	topic   string
	payload []byte
}

// fleet encodes every batch beforehand, so that encoding does not compete with the archiver.
// Batches go in time order: the first batch of every vehicle, then the second, and so on.
func fleet(l load, prefix string, base time.Time) ([]message, report, error) {
	var r report
	msgs := make([]message, 0, l.vehicles*l.batches)
	for s := 1; s <= l.batches; s++ {
		for v := range l.vehicles {
			b := makeBatch(l, prefix, base, v, s)
			p, err := wire.Encode(b, nil)
			if err != nil {
				return nil, r, err
			}
			msgs = append(msgs, message{wire.TelemetryTopic(b.Vehicle), p})
			r.batches++
			r.points += b.Readings() + 1
			r.bytes += len(p)
		}
	}
	return msgs, r, nil
}

// batchSpan is the time one batch covers; its readings are spread evenly over it.
const batchSpan = 5 * time.Second

// vehicleID is the id of vehicle v of the fleet.
func vehicleID(prefix string, v int) string { return fmt.Sprintf("%s%03d", prefix, v) }

// makeBatch returns batch seq s (from 1) of vehicle v: the same batch every time it is called.
func makeBatch(l load, prefix string, base time.Time, v, s int) *wire.Batch {
	t0 := base.Add(time.Duration(s) * batchSpan)
	b := &wire.Batch{V: wire.Version, Vehicle: vehicleID(prefix, v), Epoch: "e-load", Seq: uint64(s),
		SentAt: wire.NewTime(t0.Add(batchSpan)), Clock: wire.ClockGPS}
	at := func(i, n int) wire.Time { return wire.NewTime(t0.Add(time.Duration(i) * batchSpan / time.Duration(n))) }
	for i := range l.gps {
		speed, course, hdop, sats := 12.3+float64(i%7), 90.5, 0.9, 9
		b.GPS = append(b.GPS, wire.GPS{T: at(i, l.gps), Lat: -20.8367 - float64(s*l.gps+i)*1e-6, Lon: -40.7292 + float64(v)*1e-3,
			SpeedKmh: &speed, CourseDeg: &course, HDOP: &hdop, Sats: &sats, Fix: wire.Fix3D})
	}
	for i := range l.tacho {
		speed, odo := 12.1, 10234.555+float64(s)*0.01
		b.Tacho = append(b.Tacho, wire.Tacho{T: at(i, l.tacho), SpeedKmh: &speed, OdometerKm: &odo, Card: "0000000086H101"})
	}
	for i := range l.sound {
		laeq, lamax, dur := 68.2+float64(i%5), 74.0, 0.1
		b.Sound = append(b.Sound, wire.Sound{T: at(i, l.sound), LAeqDB: &laeq, LAmaxDB: &lamax, DurS: &dur})
	}
	return b
}

// publish sends msgs with QoS 1, at most window awaiting their PUBACK, paced at rate messages
// per second (0: as fast as the broker takes them).
func publish(ctx context.Context, c mqtt.Client, msgs []message, rate float64, window int) error {
	inflight := make(chan mqtt.Token, window)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		for tok := range inflight {
			if !tok.WaitTimeout(time.Minute) || tok.Error() != nil {
				errc <- fmt.Errorf("publish: %v", tok.Error())
				for range inflight {
				}
				return
			}
		}
	}()
	start := time.Now()
	for i, m := range msgs {
		if rate > 0 {
			if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
				time.Sleep(d)
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case inflight <- c.Publish(m.topic, 1, false, m.payload):
		case err := <-errc:
			return err
		}
	}
	close(inflight)
	if err := <-errc; err != nil {
		return err
	}
	return ctx.Err()
}
