package notify

import (
	"context"
	"testing"

	"github.com/trenzinho/trenzinho/rules"
)

type hubRecorder struct{ events []string }

func (h *hubRecorder) Publish(event string, _ any)          { h.events = append(h.events, event) }
func (h *hubRecorder) PublishLatest(event, _ string, _ any) { h.events = append(h.events, event+"*") }

// TestHubTap feeds the tap what the judge publishes (monitor/judge: the episode embedded with
// its event kind) and checks that an opening is notified once, with the licensee for the
// filters, and that every event reaches the dashboard's hub.
func TestHubTap(t *testing.T) {
	u := both("ana")
	u.Prefs.Licensees = []string{"L7"}
	d, clock, mail, _, _ := newTest(t, []User{u}, nil)
	next := &hubRecorder{}
	tap := &HubTap{Next: next, Dispatcher: d, Licensee: func(v string) string { return map[string]string{"TR-09": "L7"}[v] }}
	ep := *speedEpisode("TR-09/speed/1", clock.Now())
	ep.Vehicle = "TR-09"
	for _, kind := range []rules.EventKind{rules.EventOpen, rules.EventUpdate, rules.EventClose} {
		tap.Publish("episode", struct {
			Event string `json:"event"`
			*rules.Episode
		}{string(kind), &ep})
	}
	other := ep
	other.ID, other.Vehicle = "TR-01/speed/2", "TR-01" // not L7's
	tap.Publish("episode", struct {
		Event string `json:"event"`
		*rules.Episode
	}{"open", &other})
	tap.PublishLatest("position", "TR-09", nil)
	tap.Publish("status", map[string]string{"event": "open"})
	d.Flush(context.Background())

	got := mail.to("ana@piuma.example")
	if len(got) != 1 || got[0].Tag != "TR-09/speed/1" {
		t.Fatalf("messages %+v", got)
	}
	if len(next.events) != 6 || next.events[4] != "position*" {
		t.Errorf("hub got %v", next.events)
	}
}
