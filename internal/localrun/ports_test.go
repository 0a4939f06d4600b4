package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPortReserve: a taken default port is replaced by a free one, said so in the banner's
// words; a taken port set in the environment is an error naming the variable; a free one is
// kept and held until released.
func TestPortReserve(t *testing.T) {
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	taken := other.Addr().(*net.TCPAddr).Port

	p := port{name: "dashboard", env: "TRENZINHO_LISTEN", def: taken, port: taken}
	ln, err := p.reserve()
	if err != nil {
		t.Fatal(err)
	}
	if p.port == taken || !p.replaced || ln.Addr().(*net.TCPAddr).Port != p.port {
		t.Errorf("taken default %d: got port %d (replaced %v, listening on %v)", taken, p.port, p.replaced, ln.Addr())
	}
	if d := p.describe(); !strings.Contains(d, "ocupada") {
		t.Errorf("describe() = %q, want the replaced default said", d)
	}
	// Held: another reservation of the same port cannot have it.
	q := port{name: "again", def: p.port, port: p.port}
	ln2, err := q.reserve()
	if err != nil {
		t.Fatal(err)
	}
	if q.port == p.port {
		t.Errorf("port %d reserved twice", p.port)
	}
	ln2.Close()
	ln.Close()

	e := port{name: "MQTT broker", env: "TRENZINHO_MQTT_PORT", def: 1883, port: taken, explicit: true}
	if _, err := e.reserve(); err == nil || !strings.Contains(err.Error(), "TRENZINHO_MQTT_PORT") {
		t.Errorf("taken explicit port: err = %v, want an error naming TRENZINHO_MQTT_PORT", err)
	}
}

func TestPortsFromEnv(t *testing.T) {
	t.Setenv("TRENZINHO_MQTT_PORT", "11883")
	t.Setenv("TRENZINHO_LISTEN", "127.0.0.1:18080")
	ps, err := portsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if ps.mqtt.port != 11883 || !ps.mqtt.explicit || ps.dashboard.port != 18080 || !ps.dashboard.explicit {
		t.Errorf("mqtt %+v, dashboard %+v", ps.mqtt, ps.dashboard)
	}
	if ps.influx.port != 8086 || ps.influx.explicit || ps.influxRPC.port != 8088 || ps.ingestMetrics.port != 9101 {
		t.Errorf("defaults: influx %+v, rpc %+v, metrics %+v", ps.influx, ps.influxRPC, ps.ingestMetrics)
	}
	for _, bad := range []struct{ k, v string }{{"TRENZINHO_INFLUX_PORT", "http"}, {"TRENZINHO_LISTEN", "0.0.0.0:8080"}, {"TRENZINHO_INFLUX_RPC_PORT", "70000"}} {
		t.Run(bad.k, func(t *testing.T) {
			t.Setenv(bad.k, bad.v)
			if _, err := portsFromEnv(); err == nil || !strings.Contains(err.Error(), bad.k) {
				t.Errorf("%s=%s: err = %v", bad.k, bad.v, err)
			}
		})
	}
}

// TestListenerPIDs: the process holding a listening socket is found from /proc, which is how
// each child is checked to be the one on its port.
func TestListenerPIDs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	pids, err := listenerPIDs(port)
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) != 1 || pids[0] != os.Getpid() {
		t.Errorf("listenerPIDs(%d) = %v, want [%d]", port, pids, os.Getpid())
	}
	ln.Close()
	if pids, _ := listenerPIDs(port); len(pids) != 0 {
		t.Errorf("listenerPIDs(%d) after close = %v, want none", port, pids)
	}
}

// TestInfluxFrontWrites: the run's InfluxDB port passes writes with the run's token, in each
// form InfluxDB 1.8 takes it, to influxd, and refuses the others without passing them (an
// ingest left running by a killed run still writes to the well-known port: its batches are none
// of this run's broker's); queries pass without a token.
func TestInfluxFrontWrites(t *testing.T) {
	var writes, queries atomic.Int32
	influxd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/write", "/api/v2/write":
			writes.Add(1)
		case "/query":
			queries.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer influxd.Close()
	p := port{name: "InfluxDB HTTP"}
	token := newWriteToken()
	f, err := startInfluxFront(&p, token)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	f.connect(strings.TrimPrefix(influxd.URL, "http://"))
	base := "http://" + p.addr()
	user, pass, _ := strings.Cut(token, ":")
	line := "batch,vehicle=PIU-001 seq=1i 1700000000000000000"
	post := func(path string, auth func(*http.Request)) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(line))
		if auth != nil {
			auth(req)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	refused := []struct {
		name string
		path string
		auth func(*http.Request)
	}{
		{"no token", "/write?db=trenzinho", nil},
		{"no token, v2", "/api/v2/write?bucket=trenzinho", nil},
		{"another run's token", "/api/v2/write?bucket=trenzinho", func(r *http.Request) { r.Header.Set("Authorization", "Token "+newWriteToken()) }},
		{"wrong password", "/write?db=trenzinho", func(r *http.Request) { r.SetBasicAuth(user, pass+"x") }},
		{"user alone", "/write?db=trenzinho&u=" + user, nil},
	}
	for _, c := range refused {
		if code := post(c.path, c.auth); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", c.name, code)
		}
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d refused writes reached influxd", n)
	}
	taken := []struct {
		name string
		path string
		auth func(*http.Request)
	}{
		{"token, as ingest sends it", "/api/v2/write?bucket=trenzinho", func(r *http.Request) { r.Header.Set("Authorization", "Token "+token) }},
		{"basic authentication", "/write?db=trenzinho", func(r *http.Request) { r.SetBasicAuth(user, pass) }},
		{"u and p", "/write?db=trenzinho&" + url.Values{"u": {user}, "p": {pass}}.Encode(), nil},
	}
	for _, c := range taken {
		if code := post(c.path, c.auth); code != http.StatusNoContent {
			t.Errorf("%s: status %d, want 204", c.name, code)
		}
	}
	if n := writes.Load(); n != int32(len(taken)) {
		t.Errorf("%d writes reached influxd, want %d", n, len(taken))
	}
	if code := post("/query?db=trenzinho&q=SHOW+MEASUREMENTS", nil); code != http.StatusNoContent || queries.Load() != 1 {
		t.Errorf("query without a token: status %d, %d queries passed; want 204 and 1", code, queries.Load())
	}
}
