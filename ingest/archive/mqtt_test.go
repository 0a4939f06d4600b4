package archive

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

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

// TestBufferedConnWrites: what is written through a bufferedConn arrives whole and in order,
// Close sends what is still queued before closing, and once the peer is gone a later Write
// fails instead of queueing for ever.
func TestBufferedConnWrites(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- b
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := newBufferedConn(raw, 10*time.Second)
	var want bytes.Buffer
	for i := range 50_000 { // more than writeBuffer holds: Write waits for the writer at times
		p := []byte{0x40, 0x02, byte(i >> 8), byte(i)} // a PUBACK
		if i%1000 == 0 {
			p = bytes.Repeat([]byte{byte(i)}, writeBuffer+1) // larger than the buffer: sent alone
		}
		want.Write(p)
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("received %d bytes, want %d (or not in order)", len(b), want.Len())
	}
	if _, err := c.Write([]byte{0xc0, 0}); err == nil {
		t.Error("Write after Close succeeded")
	}

	// The peer closes: a write eventually fails, and every later one.
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	raw, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close() // a reset
	c = newBufferedConn(raw, 10*time.Second)
	defer c.Close()
	var werr error
	for i := 0; werr == nil; i++ {
		if i > 1_000_000 {
			t.Fatal("writes to a closed peer keep succeeding")
		}
		_, werr = c.Write(make([]byte, 1024))
	}
	if _, err := c.Write([]byte{1}); err == nil {
		t.Error("a Write after a failed one succeeded")
	}
}
