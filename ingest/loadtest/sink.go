package main

// The sink contender of `loadtest bench`: a subscriber with ingest's MQTT settings (its
// persistent session, QoS 1, acknowledgement left to the program, the buffered connection:
// archive.Subscribe) that acknowledges every message as soon as it arrives and drops it. It
// writes nothing, so its rate is what the broker delivers to one subscriber on this machine
// while the publisher runs: the ceiling of any MQTT consumer, ingest and Telegraf included.
// Comparing ingest with it separates the broker's share of the gap to the bare writer (which
// reads no MQTT at all) from ingest's own.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/internal/testkit/harness"
	"github.com/trenzinho/trenzinho/wire"
)

const (
	contenderSink = "sink"
	// sinkCommand is the hidden subcommand that runs the sink in a child process.
	sinkCommand = "sink"
)

// sinkChild is the parent's view of a running sink: what it reports on its standard output.
type sinkChild struct {
	warm chan struct{}   // a warm-up message arrived (one value per message, dropped when full)
	done chan sinkReport // every message of the load arrived
	errc chan error      // the sink failed
}

// sinkReport is the sink's "done" line, timed by the parent as it reads it.
type sinkReport struct {
	messages int
	at       time.Time
}

// startSink starts the sink subscribed as clientID, expecting the load's messages.
func (e *benchEnv) startSink(name, clientID string, round int) (*child, *sinkChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	argv := []string{self, sinkCommand, "--mqtt-url", e.brokerURL, "--client-id", clientID,
		"--prefix", benchPrefix, "--want", strconv.Itoa(len(e.msgs))}
	p, err := startChild(harness.Command{Name: name, LogFile: filepath.Join(e.dir, fmt.Sprintf("%s-r%d.log", name, round)),
		Argv: argv, Env: []string{childEnv + "=" + sinkCommand}, Pipes: true})
	if err != nil {
		return nil, nil, err
	}
	s := &sinkChild{warm: make(chan struct{}, 1), done: make(chan sinkReport, 1), errc: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(p.Stdout())
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "warm":
				select {
				case s.warm <- struct{}{}:
				default:
				}
			case strings.HasPrefix(line, "done "):
				n, err := strconv.Atoi(strings.TrimPrefix(line, "done "))
				if err != nil {
					s.errc <- fmt.Errorf("sink: %q", line)
					continue
				}
				s.done <- sinkReport{messages: n, at: time.Now()}
			}
		}
	}()
	return p, s, nil
}

// warmUpSink publishes the warm-up batch until the sink receives it: it is then connected and
// subscribed with its persistent session.
func (e *benchEnv) warmUpSink(ctx context.Context, p *child, s *sinkChild) error {
	b := makeBatch(load{vehicles: 1, batches: 1, gps: 1, tacho: 1, sound: 1}, "WARMUP-", e.base, 0, 1)
	payload, err := wire.Encode(b, nil)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		tok := e.pub.Publish(wire.TelemetryTopic(b.Vehicle), 1, false, payload)
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			return fmt.Errorf("warm-up publish: %v", tok.Error())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.warm:
			return nil
		case <-p.Done():
			return fmt.Errorf("sink exited: %s", p.tail())
		case <-time.After(3 * time.Second):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the sink received nothing of the warm-up batch in 2 min: %s", p.tail())
		}
	}
}

// measureSink publishes the load and waits until the sink received all of it, it exits, stalls
// or the timeout passes. Readings are counted from the messages received.
func (e *benchEnv) measureSink(ctx context.Context, r *result, p *child, s *sinkChild) error {
	perBatch := e.o.gps + e.o.tacho + e.o.sound
	s0, err := e.snap(ctx, r.database, p)
	if err != nil {
		return err
	}
	sent := make(chan error, 1)
	go func() {
		sent <- publish(ctx, e.pub, e.msgs, e.o.speedup*float64(e.o.vehicles)/batchSpan.Seconds(), e.o.window)
	}()
	var sentAt time.Time
	finish := func(at time.Time, messages int, note string) {
		if sent != nil {
			// Still sending: let the publisher finish before the next contender.
			select {
			case <-sent:
			case <-time.After(time.Minute):
			}
		}
		end := cpuSnapshot(e, p)
		r.wall = at.Sub(s0.at)
		r.cpu, r.brokerCPU, r.dbCPU = end.cpu-s0.cpu, end.brokerCPU-s0.brokerCPU, end.influxCP-s0.influxCP
		r.benchCPU = end.benchCPU - s0.benchCPU
		r.batches, r.readings = messages, messages*perBatch
		r.complete = messages == r.wantBatches
		if note != "" {
			r.notes = append(r.notes, note)
		}
		st, _ := harness.ReadStat(p.Pid())
		r.peakRSS = st.PeakRSS
		r.load1 = harness.LoadAverage()[0]
	}
	timeout := time.After(e.o.timeout)
	for {
		var stall <-chan time.Time
		if !sentAt.IsZero() {
			stall = time.After(time.Until(sentAt.Add(e.o.stall)))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-sent:
			sentAt = time.Now()
			sent = nil
			if err != nil {
				r.notes = append(r.notes, "sending failed: "+err.Error())
			}
		case d := <-s.done:
			finish(d.at, d.messages, "")
			return nil
		case err := <-s.errc:
			return err
		case <-p.Done():
			finish(time.Now(), 0, "exited: "+p.tail())
			return nil
		case <-stall:
			finish(time.Now(), 0, fmt.Sprintf("stalled: not every message arrived %s after the last was sent", e.o.stall))
			return nil
		case <-timeout:
			finish(time.Now(), 0, fmt.Sprintf("timeout after %s", e.o.timeout))
			return nil
		}
	}
}

// cpuSnapshot reads the CPU times of the contender, the broker and influxd.
func cpuSnapshot(e *benchEnv, p *child) snapshot {
	return snapshot{at: time.Now(), cpu: cpu(p.Pid()), brokerCPU: cpu(e.broker.Pid()), influxCP: cpu(e.influxd.Pid()), benchCPU: cpu(os.Getpid())}
}

// runSink is the sink's child process: it subscribes as ingest does, acknowledges and drops
// every message, says "warm" for each warm-up message, "done N" once it has received want
// messages of the load's vehicles (prefix), and runs until its standard input closes.
func runSink(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest "+sinkCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		url, clientID, prefix string
		want                  int
	)
	fs.StringVar(&url, "mqtt-url", "", "broker URL")
	fs.StringVar(&clientID, "client-id", "", "MQTT client id (persistent session)")
	fs.StringVar(&prefix, "prefix", benchPrefix, "vehicle id prefix of the load")
	fs.IntVar(&want, "want", 0, "messages of the load")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if url == "" || clientID == "" || want < 1 {
		fmt.Fprintln(stderr, "sink: --mqtt-url, --client-id and --want are required")
		return 2
	}
	var (
		mu       sync.Mutex
		received int
	)
	say := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(stdout, s)
	}
	loadTopic := "trenzinho/v1/" + prefix
	handle := func(m archive.Message) {
		m.Ack()
		switch {
		case strings.HasPrefix(m.Topic(), loadTopic):
			received++ // one goroutine: paho's, in order
			if received == want {
				say("done " + strconv.Itoa(received))
			}
		case strings.HasPrefix(m.Topic(), "trenzinho/v1/"+warmUpVehicle+"/"):
			say("warm")
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, err := archive.Subscribe(ctx, archive.MQTTConfig{MQTT: config.MQTT{URL: url}, ClientID: clientID}, handle, log)
	if err != nil {
		fmt.Fprintln(stderr, "sink:", err)
		return 1
	}
	defer stop()
	_, err = io.Copy(io.Discard, stdin) // stay measurable until the parent closes our input
	if err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintln(stderr, "sink:", err)
	}
	return 0
}
