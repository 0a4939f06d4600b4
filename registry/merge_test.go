package registry

import (
	"bytes"
	"strings"
	"testing"
)

const mergeBase = `# DADOS FICTÍCIOS — NÃO USAR EM AUTOS
licensees:
  - id: L1 # a orla
    razao_social: Trenzinho Alegria da Orla Ltda
    cnpj: 11.222.333/0001-81
vehicles:
  # primeiro trem
  - id: PIU-001
    plate: ABC1D23 # placa antiga
    licensee: L1
  # segundo trem, a remover
  - id: PIU-002
    plate: XYZ9A87
    licensee: L1
drivers: []
`

// TestMarshalOver: an edit over a commented file keeps the comments of what stays, changes a
// value in place (its comment kept), drops a removed record, and decodes to the edited registry.
func TestMarshalOver(t *testing.T) {
	r, err := Parse([]byte(mergeBase), "base")
	if err != nil {
		t.Fatal(err)
	}
	r.Vehicles[0].Plate = "ABC1D99"
	r.Vehicles = r.Vehicles[:1]
	r.Vehicles = append(r.Vehicles, Vehicle{ID: "PIU-003", Plate: "QWE4R56", Licensee: "L1"})
	b, err := r.MarshalOver([]byte(mergeBase))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, keep := range []string{"# DADOS FICTÍCIOS — NÃO USAR EM AUTOS\n", "- id: L1 # a orla", "# primeiro trem", "plate: ABC1D99 # placa antiga", "id: PIU-003"} {
		if !strings.Contains(got, keep) {
			t.Errorf("want %q in:\n%s", keep, got)
		}
	}
	if strings.Contains(got, "PIU-002") || strings.Contains(got, "ABC1D23") {
		t.Errorf("the removed record or the old value is still there:\n%s", got)
	}
	back, err := Parse(b, "merged")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := r.Marshal()
	if canon, _ := back.Marshal(); !bytes.Equal(canon, want) {
		t.Errorf("merged file decodes to\n%s\nwant\n%s", canon, want)
	}
}

// TestMarshalOverFallsBack: with no usable previous file the registry is written in the
// package's own layout.
func TestMarshalOverFallsBack(t *testing.T) {
	r, err := Parse([]byte(mergeBase), "base")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := r.Marshal()
	for _, prev := range []string{"", "- a list\n", "{{{ not yaml"} {
		got, err := r.MarshalOver([]byte(prev))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("over %q: %v\n%s", prev, err, got)
		}
	}
}

// FuzzMarshalOver: whatever the previous file holds (a person's edit, a torn or hostile file),
// writing a registry over it never panics and always gives a file that decodes to exactly that
// registry.
func FuzzMarshalOver(f *testing.F) {
	for _, s := range []string{mergeBase, "", "# só um comentário\n", "licensees: &a [1]\nvehicles: *a\n",
		"licensees:\n  - id: L1\n    id: L1\n", "vehicles: {PIU-001: x}\n", "- a\n", "{{", "note: |\n  várias\n  linhas\n"} {
		f.Add([]byte(s))
	}
	r, err := Parse([]byte(mergeBase), "base")
	if err != nil {
		f.Fatal(err)
	}
	r.Vehicles = append(r.Vehicles, Vehicle{ID: "PIU-003", Plate: "QWE4R56", Licensee: "L1"})
	want, err := r.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, prev []byte) {
		got, err := r.MarshalOver(prev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(got, "merged")
		if err != nil {
			t.Fatalf("over %q: the result does not parse: %v\n%s", prev, err, got)
		}
		if canon, _ := back.Marshal(); !bytes.Equal(canon, want) {
			t.Fatalf("over %q: the result decodes to something else:\n%s", prev, got)
		}
	})
}
