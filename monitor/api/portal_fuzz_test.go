package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStreamScope: an event's data is the judge's, built from a device's readings; whatever it
// holds, a scoped stream gets it only when it names an admitted vehicle and only an event the
// scope lists, as one well-formed frame without the redacted fields.
func FuzzStreamScope(f *testing.F) {
	for _, s := range []struct{ event, data string }{
		{"position", `{"id":"PIU-001","lat":1}`},
		{"episode", `{"event":"open","id":"e1","vehicle":"PIU-001","verification":{"by":"joao"}}`},
		{"episode", `{"id":"PIU-001","vehicle":"PIU-003"}`},
		{"status", `{"vehicle":"PIU-001","event":"new_epoch"}`},
		{"draft", `{"id":"d","vehicle":"PIU-001"}`},
		{"position", `[1,2]`}, {"position", `"PIU-001"`}, {"episode", `{"vehicle":1,"id":"PIU-001"}`},
	} {
		f.Add(s.event, s.data)
	}
	h := NewHub(HubConfig{})
	f.Fuzz(func(t *testing.T, event, data string) {
		if !json.Valid([]byte(data)) {
			return // the hub frames what json.Marshal made
		}
		frame, ok := h.frame(event, json.RawMessage(data))
		if !ok {
			return
		}
		sc := &streamScope{Events: []string{"position", "episode", "status"}, Vehicle: func(id string) bool { return id == "PIU-001" },
			Redact: []string{"verification"}}
		p := scoped{event: event, frame: frame}
		out := p.forScope(sc)
		if out == nil {
			return
		}
		if !slices.Contains(sc.Events, event) {
			t.Fatalf("event %q passed", event)
		}
		body, ok := frameData(out)
		if !ok || !bytes.HasPrefix(out, []byte("event: "+event+"\ndata: ")) || !bytes.HasSuffix(out, []byte("\n\n")) || bytes.Count(out, []byte("\n")) != 3 {
			t.Fatalf("frame %q", out)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil {
			t.Fatalf("data %q: %v", body, err)
		}
		if _, ok := fields["verification"]; ok {
			t.Fatalf("redacted field passed: %s", body)
		}
		// The vehicle the event names: its "vehicle", else its "id" (a position's).
		str := func(k string) string {
			var v string
			json.Unmarshal(fields[k], &v)
			return v
		}
		named := str("vehicle")
		if named == "" {
			named = str("id")
		}
		if named != "PIU-001" {
			t.Fatalf("an event of vehicle %q passed: %s", named, body)
		}
	})
}

// FuzzAttachment: an attachment's name and content are the uploader's; whatever they are, an
// accepted one is PDF, JPEG or PNG by its content, within the size, with a name that is one
// short line without path or quotes.
func FuzzAttachment(f *testing.F) {
	f.Add("defesa.pdf", []byte("%PDF-1.4\n%%EOF"))
	f.Add("../../etc/passwd", []byte("root:x:0:0"))
	f.Add("C:\\fotos\\a.png", []byte("\x89PNG\r\n\x1a\n...."))
	f.Add("\"x\r\ny\".jpg", []byte("\xff\xd8\xff\xe0JFIF"))
	f.Add("", []byte{})
	const max = 64
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename=%q`, name))
		w, err := mw.CreatePart(hdr)
		if err != nil {
			return
		}
		w.Write(data)
		mw.Close()
		part, err := multipart.NewReader(&buf, mw.Boundary()).NextPart()
		if err != nil {
			return
		}
		file, msg, err := readAttachment(part, max)
		if err != nil || msg != "" {
			if msg == "" && err == nil {
				t.Fatal("refused without a reason")
			}
			return
		}
		if !slices.Contains(portalFileTypes, file.ContentType) || len(file.Data) == 0 || len(file.Data) > max || !bytes.Equal(file.Data, data) {
			t.Fatalf("accepted %q (%s, %d bytes)", name, file.ContentType, len(file.Data))
		}
		if file.Name == "" || strings.ContainsAny(file.Name, "/\\\"\r\n\x00") || utf8.RuneCountInString(file.Name) > 120 {
			t.Fatalf("name %q kept as %q", name, file.Name)
		}
	})
}
