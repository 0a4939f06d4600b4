package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// monitor is a running monitor process with a logged-in API client.
type monitor struct {
	*testenv.Process
	base  string
	db    string
	token string
}

// startMonitor starts the monitor on broker with its database at db (a fresh one when empty).
func startMonitor(t *testing.T, bin, brokerURL, db string, env ...string) *monitor {
	t.Helper()
	if db == "" {
		db = filepath.Join(t.TempDir(), "monitor.db")
	}
	port := testenv.FreePort(t)
	m := &monitor{base: fmt.Sprintf("http://127.0.0.1:%d", port), db: db}
	m.Process = testenv.StartProcess(t, "monitor", append([]string{
		"TRENZINHO_MQTT_URL=" + brokerURL,
		"TRENZINHO_DB=" + db,
		fmt.Sprintf("TRENZINHO_LISTEN=127.0.0.1:%d", port),
		"TRENZINHO_ADMIN_USER=admin",
		"TRENZINHO_ADMIN_PASSWORD=segredo-de-teste",
		"TRENZINHO_MONITOR_CLIENT_ID=monitor-" + t.Name(),
		"TRENZINHO_DRAFT_SETTLE=2s",
	}, env...), filepath.Join(bin, "monitor"))
	m.login(t)
	return m
}

func (m *monitor) login(t *testing.T) {
	t.Helper()
	if err := testenv.WaitTCP(strings.TrimPrefix(m.base, "http://"), 60*time.Second); err != nil {
		t.Fatalf("monitor does not listen: %v\n%s", err, m.Log())
	}
	body, _ := json.Marshal(map[string]string{"user": "admin", "password": "segredo-de-teste"})
	resp, err := http.Post(m.base+"/api/v1/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lr struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&lr); err != nil || lr.Token == "" {
		t.Fatalf("login: %s %v", resp.Status, err)
	}
	m.token = lr.Token
}

// get GETs an API path into out.
func (m *monitor) get(t *testing.T, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", m.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+m.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// vehicles returns the ids the monitor lists, following the pages.
func (m *monitor) vehicles(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	cursor := ""
	for {
		var page struct {
			Items      []struct{ ID string }
			NextCursor string `json:"next_cursor"`
		}
		m.get(t, "/api/v1/vehicles?limit=500&cursor="+cursor, &page)
		for _, v := range page.Items {
			out[v.ID] = true
		}
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

// healthy reports whether /healthz answers 200.
func (m *monitor) healthy() bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(m.base + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// metrics scrapes the monitor's /metrics: "name{labels}" → value.
func (m *monitor) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	return scrape(t, m.base+"/metrics")
}

// ingest is a running ingest process.
type ingest struct {
	*testenv.Process
	metricsURL string
}

func startIngest(t *testing.T, bin, brokerURL string, influx *testenv.Influx, env ...string) *ingest {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	in := &ingest{metricsURL: "http://" + addr + "/metrics"}
	in.Process = testenv.StartProcess(t, "ingest", append([]string{
		"TRENZINHO_MQTT_URL=" + brokerURL,
		"TRENZINHO_INFLUX_URL=" + influx.URL(),
		"TRENZINHO_INFLUX_BUCKET=" + influx.Database,
		"TRENZINHO_INGEST_CLIENT_ID=ingest-" + t.Name(),
		"TRENZINHO_METRICS_LISTEN=" + addr,
		"TRENZINHO_INGEST_BATCH_INTERVAL=200ms",
	}, env...), filepath.Join(bin, "ingest"))
	waitFor(t, "ingest subscribed", 60*time.Second, func() bool {
		m, err := tryScrape(in.metricsURL)
		return err == nil && m["trenzinho_ingest_mqtt_up"] == 1
	})
	return in
}

func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	m, err := tryScrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tryScrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// series counts the metric series of a scrape whose name starts with prefix.
func series(m map[string]float64, prefix string) int {
	n := 0
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// publisher is an MQTT client that publishes with QoS 1 and waits for each PUBACK.
type publisher struct{ c mqtt.Client }

func newPublisher(t *testing.T, url, id string) *publisher {
	t.Helper()
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect %s: %v", url, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return &publisher{c}
}

func (p *publisher) publish(t *testing.T, topic string, payload []byte) {
	t.Helper()
	if tok := p.c.Publish(topic, 1, false, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

// quarantineSink collects the quarantine records ingest publishes, by the topic of the payload.
type quarantineSink struct {
	mu      sync.Mutex
	byTopic map[string][]wire.Quarantine
	total   int
}

func subscribeQuarantine(t *testing.T, url string) *quarantineSink {
	t.Helper()
	s := &quarantineSink{byTopic: map[string][]wire.Quarantine{}}
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID("quarantine-" + t.Name()).SetCleanSession(true))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	tok := c.Subscribe(wire.QuarantineWildcard, 1, func(_ mqtt.Client, m mqtt.Message) {
		var q wire.Quarantine
		if json.Unmarshal(m.Payload(), &q) != nil {
			return
		}
		s.mu.Lock()
		s.byTopic[q.Topic] = append(s.byTopic[q.Topic], q)
		s.total++
		s.mu.Unlock()
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return s
}

func (s *quarantineSink) records(topic string) []wire.Quarantine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wire.Quarantine(nil), s.byTopic[topic]...)
}

func (s *quarantineSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
