package api

import (
	"bytes"
	"encoding/json"
	"slices"
)

// streamScope restricts a stream to some vehicles' events, server-side (the licensee's portal):
// only the events named in Events, only of a vehicle Vehicle admits, with the fields in Redact
// removed from their data. An event of any other name — a draft under review, whatever a later
// version adds — never reaches a scoped stream.
type streamScope struct {
	Events  []string
	Vehicle func(id string) bool
	Redact  []string // top-level fields of the data removed (e.g. an episode's verification)
}

// scoped is one published event as the scoped streams get it: its vehicle and its redacted
// frame are worked out once, for the first scoped stream that asks.
type scoped struct {
	event   string
	frame   []byte
	decoded bool
	fields  map[string]json.RawMessage
	vehicle string
	cache   map[*streamScope][]byte
}

// forScope is the frame the stream of sc gets, nil for none.
func (p *scoped) forScope(sc *streamScope) []byte {
	if !slices.Contains(sc.Events, p.event) {
		return nil
	}
	if out, ok := p.cache[sc]; ok {
		return out
	}
	if !p.decoded {
		p.decoded = true
		if data, ok := frameData(p.frame); ok && json.Unmarshal(data, &p.fields) == nil {
			var id string
			for _, k := range []string{"vehicle", "id"} { // an episode's or status's vehicle; a position's id
				if raw, ok := p.fields[k]; ok && json.Unmarshal(raw, &id) == nil && id != "" {
					break
				}
			}
			p.vehicle = id
		}
	}
	var out []byte
	if p.fields != nil && p.vehicle != "" && sc.Vehicle(p.vehicle) {
		out = p.frame
		if len(sc.Redact) > 0 {
			fields := make(map[string]json.RawMessage, len(p.fields))
			for k, v := range p.fields {
				if !slices.Contains(sc.Redact, k) {
					fields[k] = v
				}
			}
			b, err := json.Marshal(fields)
			if err != nil {
				out = nil
			} else {
				out = append(append([]byte("event: "+p.event+"\ndata: "), b...), "\n\n"...)
			}
		}
	}
	if p.cache == nil {
		p.cache = map[*streamScope][]byte{}
	}
	p.cache[sc] = out
	return out
}

// frameData is the JSON of a frame made by Hub.frame.
func frameData(frame []byte) ([]byte, bool) {
	_, rest, ok := bytes.Cut(frame, []byte("\ndata: "))
	if !ok {
		return nil, false
	}
	return bytes.TrimSuffix(rest, []byte("\n\n")), true
}
