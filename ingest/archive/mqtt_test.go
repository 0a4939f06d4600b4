package archive

import "testing"

// TestBuffered: ingest opens TCP and TLS connections itself, with a read buffer, and leaves
// WebSocket, Unix sockets and proxied connections to paho.
func TestBuffered(t *testing.T) {
	t.Setenv("all_proxy", "")
	t.Setenv("ALL_PROXY", "")
	for url, want := range map[string]bool{
		"tcp://127.0.0.1:1883": true, "mqtt://broker:1883": true, "ssl://broker:8883": true, "tls://broker:8883": true,
		"mqtts://broker:8883": true, "tcps://broker:8883": true, "ws://broker:9001": false, "wss://broker:9001": false,
		"unix:///run/mosquitto.sock": false, "::bad": false,
	} {
		if got := buffered(url); got != want {
			t.Errorf("buffered(%q) = %v, want %v", url, got, want)
		}
	}
	t.Setenv("all_proxy", "socks5://proxy:1080")
	if buffered("tcp://127.0.0.1:1883") {
		t.Error("a proxied connection is buffered")
	}
}
