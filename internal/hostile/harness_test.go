package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// monitor is a running monitor process with a logged-in API client.
type monitor struct {
	*testenv.Monitor
	token string
}

// startMonitor starts the monitor on broker with its database at db (a fresh one when empty).
func startMonitor(t *testing.T, bin, brokerURL, db string, env ...string) *monitor {
	t.Helper()
	m := &monitor{Monitor: testenv.StartMonitor(t, bin, brokerURL, db, append([]string{"TRENZINHO_DRAFT_SETTLE=2s"}, env...)...)}
	m.token = m.Login(t)
	return m
}

// get GETs an API path into out.
func (m *monitor) get(t *testing.T, path string, out any) {
	t.Helper()
	testenv.Get(t, m.URL, m.token, path, out)
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
	resp, err := c.Get(m.URL + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// metrics scrapes the monitor's /metrics: "name{labels}" → value.
func (m *monitor) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	return testenv.Scrape(t, m.URL+"/metrics")
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
	testenv.WaitFor(t, "ingest subscribed", 60*time.Second, func() bool {
		m, err := harness.Scrape(in.metricsURL)
		return err == nil && m["trenzinho_ingest_mqtt_up"] == 1
	})
	return in
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
