package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// lockedBuffer is a bytes.Buffer that a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// simulation is one `firmware-bridge simulate` process and the device paths it printed.
type simulation struct {
	devices map[string]map[string]string // vehicle → gps|tacho|slm → path
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	exited  chan struct{}
}

// simStats is what the simulator wrote for one vehicle, printed on its standard error when it
// ends: every write counted, and the writes dropped because nobody read them within a second.
type simStats struct {
	Vehicle     string `json:"vehicle"`
	GPSEpochs   int    `json:"gps_epochs"`
	TachoFrames int    `json:"tacho_frames"`
	SLMFrames   int    `json:"slm_frames"`
	Dropped     int    `json:"dropped_writes"`
}

func startSimulation(t *testing.T, bin string, args ...string) *simulation {
	t.Helper()
	dir := t.TempDir()
	// The simulator starts playing once the bridges the test starts next have opened its
	// devices (at most 30 s): a frame written before a bridge listens would be read late, in a
	// burst timed by the bridge's clock on receipt. A test may override it (later flags win).
	cmd := exec.Command(filepath.Join(bin, "firmware-bridge"), append([]string{"simulate", "--dir", dir, "--wait-readers=30s"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &simulation{devices: map[string]map[string]string{}, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("simulate stderr: %s", s.stderr.String())
		}
	})
	sc := bufio.NewScanner(out)
	want := 1
	for _, a := range args {
		if strings.HasPrefix(a, "--vehicles=") {
			fmt.Sscanf(a, "--vehicles=%d", &want)
		}
	}
	for len(s.devices) < want && sc.Scan() {
		var line map[string]string
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("simulate printed %q: %v", sc.Text(), err)
		}
		s.devices[line["vehicle"]] = line
	}
	if len(s.devices) < want {
		cmd.Process.Kill()
		t.Fatalf("simulate printed %d vehicles, want %d: %s", len(s.devices), want, s.stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
		cmd.Wait()
		close(s.exited)
	}()
	return s
}

// kill ends the simulator at once (its pseudo-terminals vanish with it).
func (s *simulation) kill() {
	s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
	}
}

// wait waits for a simulator started with --duration to finish and returns what it wrote.
func (s *simulation) wait(t *testing.T, timeout time.Duration) map[string]simStats {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(timeout):
		t.Fatalf("simulator still running after %v", timeout)
	}
	out := map[string]simStats{}
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var st simStats
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &st) == nil && st.Vehicle != "" {
			out[st.Vehicle] = st
		}
	}
	if len(out) != len(s.devices) {
		t.Fatalf("simulator printed stats for %d vehicles, want %d: %s", len(out), len(s.devices), s.stderr.String())
	}
	return out
}

// startBridge runs `firmware-bridge run` for one simulated vehicle with a 1 s batch interval;
// extra flags are added last (and win). The process can be killed and started again on the
// same state directory.
func startBridge(t *testing.T, bin, mqttURL, vehicle string, dev map[string]string, extra ...string) *testenv.Process {
	t.Helper()
	args := []string{filepath.Join(bin, "firmware-bridge"), "run",
		"--vehicle", vehicle, "--state-dir", filepath.Join(t.TempDir(), "state"),
		"--gps-port", dev["gps"], "--batch-interval", "1s",
		// No coach status page unless a test asks for one (extra): the default port, 8088,
		// is one for the whole machine and the tests run in parallel.
		"--coach-listen="}
	if dev["tacho"] != "" {
		args = append(args, "--tacho-port", dev["tacho"])
	}
	if dev["slm"] != "" {
		args = append(args, "--slm-port", dev["slm"])
	}
	args = append(args, extra...)
	return testenv.StartProcess(t, "bridge-"+vehicle, []string{"TRENZINHO_MQTT_URL=" + mqttURL}, args...)
}

// serviceInput is the bridge's flag that reads the simulated vehicle's service switch (its
// GPIO value file; on unless the scenario turns it off): with it, "em serviço" is observed and a
// speed or hours episode grounds an auto; without it, service is only inferred from movement.
func serviceInput(t *testing.T, dev map[string]string) []string {
	t.Helper()
	if dev["service"] == "" {
		t.Fatalf("simulate printed no service switch file: %v", dev)
	}
	return []string{"--service-input", dev["service"]}
}

// batchKey identifies a batch (docs/protocol.md §5).
type batchKey struct {
	vehicle, epoch string
	seq            uint64
}

// telemetrySink is a subscriber, as ingest and the monitor are: paho, QoS 1, one vehicle's
// telemetry and status. It keeps the first copy of every batch (each checked by wire.Decode),
// counts the copies, and keeps every status message.
type telemetrySink struct {
	client  mqtt.Client
	vehicle string

	mu       sync.Mutex
	batches  map[batchKey]*wire.Batch
	copies   map[batchKey]int
	messages int
	invalid  []string
	statuses []wire.Status
}

// subscribe connects a sink. A persistent sink (CleanSession false, a fixed client id) has
// the broker queue what arrives while it is disconnected, across a broker restart.
func subscribe(t *testing.T, url, clientID string, persistent bool, vehicle string) *telemetrySink {
	t.Helper()
	s := &telemetrySink{vehicle: vehicle, batches: map[batchKey]*wire.Batch{}, copies: map[batchKey]int{}}
	opts := mqtt.NewClientOptions().AddBroker(url).SetClientID(clientID).
		SetCleanSession(!persistent).SetAutoReconnect(true).SetMaxReconnectInterval(time.Second).
		SetKeepAlive(5 * time.Second).SetDefaultPublishHandler(s.handle)
	s.client = mqtt.NewClient(opts)
	if tok := s.client.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("subscriber connect: %v", tok.Error())
	}
	t.Cleanup(func() { s.client.Disconnect(100) })
	tok := s.client.SubscribeMultiple(map[string]byte{wire.TelemetryTopic(vehicle): 1, wire.StatusTopic(vehicle): 1}, s.handle)
	if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return s
}

func (s *telemetrySink) handle(_ mqtt.Client, m mqtt.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, kind, err := wire.VehicleFromTopic(m.Topic())
	if err != nil {
		s.invalid = append(s.invalid, err.Error())
		return
	}
	switch kind {
	case "telemetry":
		s.messages++
		// The sink checks what the bridge sent, not the receivers' clock window: simulations
		// run their device time faster than the wall clock (--speed-up), which the monitor and
		// ingest would refuse as a clock fault past max_ahead. A zero receive time keeps every
		// other check of wire.Decode.
		b, err := wire.Decode(m.Topic(), m.Payload(), time.Time{})
		if err != nil {
			s.invalid = append(s.invalid, err.Error())
			return
		}
		k := batchKey{b.Vehicle, b.Epoch, b.Seq}
		if s.copies[k] == 0 {
			s.batches[k] = b
		}
		s.copies[k]++
	case "status":
		var st wire.Status
		if err := json.Unmarshal(m.Payload(), &st); err != nil {
			s.invalid = append(s.invalid, "status: "+err.Error())
			return
		}
		s.statuses = append(s.statuses, st)
	}
}

// maxSeq is the highest seq received (of any epoch).
func (s *telemetrySink) maxSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m uint64
	for k := range s.batches {
		m = max(m, k.seq)
	}
	return m
}

// complete reports whether every seq from 1 to last has arrived in each epoch seen.
func (s *telemetrySink) complete(last uint64) bool {
	eps := s.epochs()
	for _, e := range eps {
		if e.maxSeq < last || len(e.missing) > 0 {
			return false
		}
	}
	return len(eps) > 0
}

// epochReport is what arrived of one (vehicle, epoch) sequence space.
type epochReport struct {
	epoch      string
	distinct   int      // batches received at least once
	maxSeq     uint64   // the highest seq received
	missing    []uint64 // seqs from 1 to maxSeq never received: gaps
	duplicates int      // copies beyond the first
}

func (s *telemetrySink) epochs() []epochReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	by := map[string]*epochReport{}
	for k, n := range s.copies {
		e := by[k.epoch]
		if e == nil {
			e = &epochReport{epoch: k.epoch}
			by[k.epoch] = e
		}
		e.distinct++
		e.duplicates += n - 1
		e.maxSeq = max(e.maxSeq, k.seq)
	}
	var out []epochReport
	for epoch, e := range by {
		for seq := uint64(1); seq <= e.maxSeq; seq++ {
			if s.copies[batchKey{s.vehicle, epoch, seq}] == 0 {
				e.missing = append(e.missing, seq)
			}
		}
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b epochReport) int { return strings.Compare(a.epoch, b.epoch) })
	return out
}

// received returns the first copy of every batch, in (epoch, seq) order.
func (s *telemetrySink) received() []*wire.Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*wire.Batch, 0, len(s.batches))
	for _, b := range s.batches {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *wire.Batch) int {
		if c := strings.Compare(a.Epoch, b.Epoch); c != 0 {
			return c
		}
		return int(a.Seq) - int(b.Seq)
	})
	return out
}

func (s *telemetrySink) invalidMessages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.invalid)
}

func (s *telemetrySink) statusCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.statuses)
}

// finalStatus waits for the status a bridge publishes when it stops cleanly ({"online":false}
// with its seq and spool depth; the will of a killed bridge carries neither), among the
// statuses after the first `after`.
func (s *telemetrySink) finalStatus(t *testing.T, after int) wire.Status {
	t.Helper()
	var st wire.Status
	testenv.WaitFor(t, "the bridge's final status", time.Minute, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, x := range s.statuses[after:] {
			if !x.Online && x.T != nil {
				st = x
				return true
			}
		}
		return false
	})
	return st
}

// flakyLink is a TCP proxy between a bridge and the broker that the test can stall and cut, as
// a mobile link does: stalled, the bridge's bytes stop reaching the broker (it keeps publishing
// into a link that delivers nothing and acknowledges nothing); cut, every connection is reset
// and whatever was in flight is lost.
type flakyLink struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	cond    *sync.Cond
	stalled bool
	pairs   map[*linkPair]bool
}

type linkPair struct {
	client, broker *net.TCPConn
	cut, closed    bool
}

func startLink(t *testing.T, target string) *flakyLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &flakyLink{ln: ln, target: target, pairs: map[*linkPair]bool{}}
	l.cond = sync.NewCond(&l.mu)
	go l.serve()
	t.Cleanup(func() {
		ln.Close()
		l.cut()
	})
	return l
}

// URL is the broker URL through the link.
func (l *flakyLink) URL() string { return "tcp://" + l.ln.Addr().String() }

func (l *flakyLink) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		go l.handle(c.(*net.TCPConn))
	}
}

func (l *flakyLink) handle(c *net.TCPConn) {
	b, err := net.Dial("tcp", l.target)
	if err != nil {
		c.Close()
		return
	}
	p := &linkPair{client: c, broker: b.(*net.TCPConn)}
	l.mu.Lock()
	l.pairs[p] = true
	l.mu.Unlock()
	go func() {
		io.Copy(p.client, p.broker) // broker → bridge: never stalled
		l.close(p)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			l.mu.Lock()
			for l.stalled && !p.cut {
				l.cond.Wait()
			}
			cut := p.cut
			l.mu.Unlock()
			if cut {
				break
			}
			if _, err := p.broker.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	l.close(p)
}

// close resets both sides: what they still hold is discarded.
func (l *flakyLink) close(p *linkPair) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	delete(l.pairs, p)
	p.client.SetLinger(0)
	p.broker.SetLinger(0)
	p.client.Close()
	p.broker.Close()
}

// stall stops the bridge-to-broker direction.
func (l *flakyLink) stall() {
	l.mu.Lock()
	l.stalled = true
	l.mu.Unlock()
}

// cut resets every connection, losing what the stall held, and lets new connections through.
func (l *flakyLink) cut() {
	l.mu.Lock()
	var pairs []*linkPair
	for p := range l.pairs {
		p.cut = true
		pairs = append(pairs, p)
	}
	l.stalled = false
	l.cond.Broadcast()
	l.mu.Unlock()
	for _, p := range pairs {
		l.close(p)
	}
}
