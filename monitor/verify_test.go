package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/wire"
)

func TestVerifyCommand(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	now := wire.NewTime(time.Now())
	b, _ := json.Marshal(drafts.Bundle{Format: 1, Draft: drafts.Draft{ID: "D1", Vehicle: "PIU-001", FineUFMP: 400, Start: now, End: now, CreatedAt: now}, Batches: []drafts.RawBatch{}})
	s := drafts.Seal("D1", 1, b, "", key)
	dir := t.TempDir()
	write := func(name string, s drafts.Sealed) string {
		p := filepath.Join(dir, name)
		j, _ := json.Marshal(s)
		if err := os.WriteFile(p, j, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", s)
	var out bytes.Buffer
	pub := hex.EncodeToString(key.Public().(ed25519.PublicKey))
	if err := cmdVerify([]string{"--key", pub, good}, &out); err != nil || !strings.Contains(out.String(), "íntegro") {
		t.Fatalf("intact draft: %v\n%s", err, out.String())
	}
	edited := s
	edited.Bundle = bytes.Replace(s.Bundle, []byte(`"fine_ufmp":400`), []byte(`"fine_ufmp":40`), 1)
	out.Reset()
	if err := cmdVerify([]string{write("edited.json", edited)}, &out); !errors.Is(err, errIntegrity) || !strings.Contains(out.String(), "VIOLADO") {
		t.Fatalf("edited draft: %v\n%s", err, out.String())
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	out.Reset()
	if err := cmdVerify([]string{"--key", pub, write("other.json", drafts.Seal("D1", 1, b, "", other))}, &out); !errors.Is(err, errIntegrity) {
		t.Fatalf("draft signed by another key: %v\n%s", err, out.String())
	}
}
