package api

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestHubDropsSlowSubscriber(t *testing.T) {
	h := NewHub(HubConfig{Buffer: 3})
	fast, err := h.subscribe("u")
	if err != nil {
		t.Fatal(err)
	}
	slow, err := h.subscribe("u")
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
	a, _ := h.subscribe("u")
	if _, err := h.subscribe("u"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.subscribe("u"); err != errHubFull {
		t.Errorf("third subscriber: %v, want errHubFull", err)
	}
	h.Close()
	select {
	case <-a.gone:
	default:
		t.Error("Close left a stream open")
	}
	if _, err := h.subscribe("u"); err != errHubClosed {
		t.Errorf("subscribe after Close: %v", err)
	}
	h.Publish(EventDraft, 1) // no subscribers, no panic
}

func TestThrottle(t *testing.T) {
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	th := newThrottle(3, time.Minute, func() time.Time { return now })
	allowed := func(k string) bool {
		_, ok := th.admit(k)
		if ok {
			th.done(k, false)
		}
		return ok
	}
	fail := func(k string) {
		if _, ok := th.admit(k); !ok {
			t.Fatalf("%s refused before the limit", k)
		}
		th.done(k, true)
	}
	for range 3 {
		fail("192.0.2.1")
		now = now.Add(10 * time.Second)
	}
	if left, ok := th.admit("192.0.2.1"); ok || left != 30*time.Second {
		t.Errorf("after 3 failures: admitted %v, refused for %v; want refused for 30s (the window runs from the first failure)", ok, left)
	}
	if !allowed("192.0.2.2") {
		t.Error("another key refused")
	}
	now = now.Add(30 * time.Second)
	if !allowed("192.0.2.1") {
		t.Error("refused after the window")
	}
	if len(th.fails) != 0 || len(th.pending) != 0 {
		t.Errorf("left behind: %v %v", th.fails, th.pending)
	}

	// Attempts in flight hold their places: three at once, a fourth is refused, and once the
	// three fail the key is refused for the window.
	for range 3 {
		if _, ok := th.admit("192.0.2.3"); !ok {
			t.Fatal("refused below the limit")
		}
	}
	if _, ok := th.admit("192.0.2.3"); ok {
		t.Error("a fourth attempt admitted while three are in flight")
	}
	for range 3 {
		th.done("192.0.2.3", true)
	}
	if allowed("192.0.2.3") {
		t.Error("admitted after three failures in flight")
	}
	now = now.Add(time.Minute)

	// Bounded: past maxKeys the key whose window ends first is forgotten, never a newer one.
	th.maxKeys = 3
	for i := range 4 {
		fail(fmt.Sprint("k", i))
		now = now.Add(time.Second)
	}
	if _, ok := th.fails["k0"]; ok || len(th.fails) != 3 {
		t.Errorf("after 4 keys with room for 3: %v", th.fails)
	}
}

// A client that does not read while 500 vehicles move 20 times each is not dropped: it holds
// one position per vehicle, the newest, in the order the vehicles first moved.
func TestHubPublishLatestCoalesces(t *testing.T) {
	h := NewHub(HubConfig{Buffer: 4, MaxKeys: 500})
	slow, err := h.subscribe("u")
	if err != nil {
		t.Fatal(err)
	}
	for step := range 20 {
		for v := range 500 {
			h.PublishLatest(EventPosition, fmt.Sprint("PIU-", v), map[string]int{"v": v, "step": step})
		}
	}
	h.Publish(EventEpisode, 1) // ordered events still go through the buffer
	select {
	case <-slow.gone:
		t.Fatal("slow subscriber dropped")
	default:
	}
	if len(slow.wake) != 1 {
		t.Fatal("no wake-up pending")
	}
	frames := slow.takeLatest()
	if len(frames) != 500 {
		t.Fatalf("%d pending positions, want 500", len(frames))
	}
	for v, f := range frames {
		want := fmt.Sprintf("event: position\ndata: {\"step\":19,\"v\":%d}\n\n", v)
		if string(f) != want {
			t.Fatalf("frame %d = %q, want %q", v, f, want)
		}
	}
	if len(slow.takeLatest()) != 0 {
		t.Error("takeLatest did not empty the pending positions")
	}
	if len(slow.frames) != 1 {
		t.Errorf("%d ordered frames, want 1", len(slow.frames))
	}

	// More distinct keys than MaxKeys pending: dropped like a full buffer.
	for v := range 501 {
		h.PublishLatest(EventPosition, fmt.Sprint("X-", v), v)
	}
	select {
	case <-slow.gone:
	default:
		t.Fatal("subscriber with more than MaxKeys pending not dropped")
	}
	if h.Dropped() != 1 {
		t.Errorf("dropped %d", h.Dropped())
	}
}
