package api

import (
	"math"
	"testing"
	"time"
)

func TestHubDropsSlowSubscriber(t *testing.T) {
	h := NewHub(HubConfig{Buffer: 3})
	fast, err := h.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	slow, err := h.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		h.Publish(EventStatus, map[string]int{"n": i}) // must return although slow never reads
		if got, want := string(<-fast.frames), "event: status\ndata: {\"n\":"+string(rune('0'+i))+"}\n\n"; got != want {
			t.Fatalf("frame %q, want %q", got, want)
		}
	}
	select {
	case <-slow.gone:
	default:
		t.Fatal("slow subscriber not dropped")
	}
	if len(slow.frames) != 3 {
		t.Errorf("slow subscriber holds %d frames, want its buffer (3)", len(slow.frames))
	}
	if h.Clients() != 1 || h.Dropped() != 1 {
		t.Errorf("clients %d, dropped %d", h.Clients(), h.Dropped())
	}

	// Events that cannot be framed or encoded are refused, not sent.
	h.Publish("bad\nname", 1)
	h.Publish(EventStatus, math.Inf(1))
	if len(fast.frames) != 0 {
		t.Errorf("bad events were sent")
	}

	h.unsubscribe(fast)
	h.unsubscribe(fast) // twice is harmless
	if h.Clients() != 0 {
		t.Errorf("clients %d after unsubscribe", h.Clients())
	}
}

func TestHubClose(t *testing.T) {
	h := NewHub(HubConfig{MaxClients: 2})
	a, _ := h.subscribe()
	if _, err := h.subscribe(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.subscribe(); err != errHubFull {
		t.Errorf("third subscriber: %v, want errHubFull", err)
	}
	h.Close()
	select {
	case <-a.gone:
	default:
		t.Error("Close left a stream open")
	}
	if _, err := h.subscribe(); err != errHubClosed {
		t.Errorf("subscribe after Close: %v", err)
	}
	h.Publish(EventDraft, 1) // no subscribers, no panic
}

func TestThrottle(t *testing.T) {
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	th := newThrottle(3, time.Minute, func() time.Time { return now })
	for range 3 {
		if !th.allowed("192.0.2.1") {
			t.Fatal("refused before the limit")
		}
		th.fail("192.0.2.1")
	}
	if th.allowed("192.0.2.1") {
		t.Error("allowed after 3 failures")
	}
	if !th.allowed("192.0.2.2") {
		t.Error("another address refused")
	}
	now = now.Add(time.Minute)
	if !th.allowed("192.0.2.1") {
		t.Error("refused after the window")
	}
	th.fail("192.0.2.1")
	th.reset("192.0.2.1")
	if len(th.fails) != 0 {
		t.Errorf("reset left %v", th.fails)
	}
}
