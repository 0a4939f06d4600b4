package notify

import (
	"encoding/json"

	"github.com/trenzinho/trenzinho/rules"
)

// Hub is the judge's live-event sink (judge.Hub): the dashboard's stream.
type Hub interface {
	Publish(event string, data any)
	PublishLatest(event, key string, data any)
}

// HubTap stands between the judge and the dashboard's hub: it passes every event on, and
// notifies each episode that opens. It reads the episode from the event's public JSON shape
// ({"event":"open", …episode}), so that it depends on what the dashboard reads and not on the
// judge's types.
type HubTap struct {
	Next       Hub // the dashboard's hub; may be nil
	Dispatcher *Dispatcher
	// Licensee names a vehicle's licensee (the registry's), for the users' licensee filters;
	// nil or "" when unknown.
	Licensee func(vehicle string) string
	// Severity is the severity of a rule; DefaultSeverity when nil.
	Severity func(rule string) Severity
}

// Publish passes the event on and notifies an opening episode.
func (t *HubTap) Publish(event string, data any) {
	if t.Next != nil {
		t.Next.Publish(event, data)
	}
	if event != "episode" || t.Dispatcher == nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	var ev struct {
		Event string `json:"event"`
		rules.Episode
	}
	if err := json.Unmarshal(b, &ev); err != nil || ev.Event != string(rules.EventOpen) || ev.ID == "" {
		return
	}
	var licensee string
	if t.Licensee != nil {
		licensee = t.Licensee(ev.Vehicle)
	}
	sev := DefaultSeverity(ev.Rule)
	if t.Severity != nil {
		sev = t.Severity(ev.Rule)
	}
	t.Dispatcher.Notify(FromEpisode(&ev.Episode, licensee, sev))
}

// PublishLatest passes the event on.
func (t *HubTap) PublishLatest(event, key string, data any) {
	if t.Next != nil {
		t.Next.PublishLatest(event, key, data)
	}
}
