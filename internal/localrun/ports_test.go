package main

import (
	"net"
	"os"
	"strings"
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
