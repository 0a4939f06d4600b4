package registry

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const examplePath = "testdata/piuma-example.yaml"

func loadExample(t testing.TB) *Registry {
	t.Helper()
	r, err := Load(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExample(t *testing.T) {
	r := loadExample(t)
	if len(r.Licensees) != 2 || len(r.Vehicles) != 3 || len(r.Drivers) != 3 {
		t.Fatalf("%d licensees, %d vehicles, %d drivers", len(r.Licensees), len(r.Vehicles), len(r.Drivers))
	}
	if r.Note == "" {
		t.Error("the example does not say it is example data")
	}
	// Canonical forms.
	if got := r.Licensees[1].CNPJ; got != "12ABC34501DE35" {
		t.Errorf("L2 CNPJ = %q", got)
	}
	if got := r.Drivers[0].CPF; got != "12345678909" {
		t.Errorf("D1 CPF = %q", got)
	}
	for i, id := range []string{"PIU-001", "PIU-002", "PIU-003"} {
		if r.Vehicles[i].ID != id {
			t.Errorf("vehicle %d is %q, want %q", i, r.Vehicles[i].ID, id)
		}
	}
	if r.Drivers[0].TachographCard != "0000000086H101" {
		t.Errorf("D1 card = %q, want the simulator's", r.Drivers[0].TachographCard)
	}
	if got, want := r.Vehicles[0].Devices[0].ValidUntil, MustDate("2028-02-09"); got != want {
		t.Errorf("tachograph valid until %v, want %v", got, want)
	}
	// The demonstration key comes from the seed the file's comment speaks of.
	seed := sha256.Sum256([]byte("trenzinho: chave de exemplo PIU-001, não usar"))
	want := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
	got, err := r.Vehicles[0].Ed25519Key()
	if err != nil || !got.Equal(want) {
		t.Errorf("PIU-001 key = %x, %v; want %x", got, err, want)
	}
	if k, err := r.Vehicles[1].Ed25519Key(); k != nil || err != nil {
		t.Errorf("PIU-002 key = %x, %v; want none", k, err)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	r := loadExample(t)
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "valid_until: 2028-02-09\n") {
		t.Errorf("dates are not written as plain YYYY-MM-DD:\n%s", b)
	}
	if strings.Contains(string(b), "null") || strings.Contains(string(b), "0001-01-01") {
		t.Errorf("unknown values are written:\n%s", b)
	}
	r2, err := Parse(b, "marshalled")
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(r, r2) {
		t.Errorf("round trip changed the registry:\n%+v\n%+v", r, r2)
	}
	b2, _ := r2.Marshal()
	if string(b) != string(b2) {
		t.Error("Marshal is not stable")
	}
}

func TestJSON(t *testing.T) {
	r := loadExample(t)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"valid_until":"2028-02-09"`, `"cnpj":"12ABC34501DE35"`, `"tachograph_card":"0000000086H101"`} {
		if !strings.Contains(s, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	if strings.Contains(s, `"calibration":""`) || strings.Contains(s, `"issued":""`) {
		t.Error("JSON carries unknown dates")
	}
	var r2 Registry
	if err := json.Unmarshal(b, &r2); err != nil {
		t.Fatal(err)
	}
	if err := r2.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, &r2) {
		t.Error("JSON round trip changed the registry")
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "licensees: []\n"} {
		r, err := Parse([]byte(in), "empty")
		if err != nil || len(r.Licensees)+len(r.Vehicles)+len(r.Drivers) != 0 {
			t.Errorf("Parse(%q) = %+v, %v", in, r, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown key", "licensees:\n  - id: L1\n    razao: X\n", "razao"},
		{"bad date", "licensees:\n  - id: L1\n    razao_social: X\n    cnpj: 11222333000181\n    documents:\n      - kind: licenca\n        valid_until: 2026-13-01\n", "AAAA-MM-DD"},
		{"date with time", "licensees:\n  - id: L1\n    razao_social: X\n    cnpj: 11222333000181\n    documents:\n      - kind: licenca\n        valid_until: 2026-01-01T10:00:00Z\n", "AAAA-MM-DD"},
		{"date as list", "licensees:\n  - id: L1\n    razao_social: X\n    cnpj: 11222333000181\n    documents:\n      - kind: licenca\n        valid_until: [1]\n", "AAAA-MM-DD"},
		{"not a mapping", "- 1\n", "cannot unmarshal"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.yaml") {
			t.Errorf("%s: error %v, want one naming the file and containing %q", c.name, err, c.want)
		}
	}
}

// validRegistry is a small valid registry the validation tests break one field at a time.
func validRegistry() *Registry {
	return &Registry{
		Licensees: []Licensee{{ID: "L1", RazaoSocial: "Exemplo Ltda", CNPJ: "11222333000181"}},
		Vehicles: []Vehicle{{ID: "PIU-001", Plate: "ABC1D23", Licensee: "L1",
			Devices: []Device{{Kind: DeviceTachograph, Serial: "T1"}}}},
		Drivers: []Driver{{ID: "D1", Name: "Maria", CPF: "12345678909", TachographCard: "0000000086H101", Licensee: "L1"}},
	}
}

func TestValidateNamesField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(r *Registry)
		want   []string // "record.field" of every error
	}{
		{"licensee id missing", func(r *Registry) { r.Licensees[0].ID = "" },
			[]string{"licensees[#1].id", "vehicles[PIU-001].licensee", "drivers[D1].licensee"}},
		{"licensee id bad", func(r *Registry) {
			r.Licensees[0].ID = "L 1"
			r.Vehicles[0].Licensee = "L 1"
			r.Drivers[0].Licensee = "L 1"
		},
			[]string{"licensees[#1].id", "vehicles[PIU-001].licensee", "drivers[D1].licensee"}},
		{"razão social", func(r *Registry) { r.Licensees[0].RazaoSocial = " " }, []string{"licensees[L1].razao_social"}},
		{"cnpj missing", func(r *Registry) { r.Licensees[0].CNPJ = "" }, []string{"licensees[L1].cnpj"}},
		{"cnpj digits", func(r *Registry) { r.Licensees[0].CNPJ = "11222333000182" }, []string{"licensees[L1].cnpj"}},
		{"cnpj repeated", func(r *Registry) {
			r.Licensees = append(r.Licensees, Licensee{ID: "L2", RazaoSocial: "Y", CNPJ: "11.222.333/0001-81"})
		}, []string{"licensees[L2].cnpj"}},
		{"licensee repeated", func(r *Registry) {
			r.Licensees = append(r.Licensees, Licensee{ID: "L1", RazaoSocial: "Y", CNPJ: "12ABC34501DE35"})
		}, []string{"licensees[L1].id"}},
		{"document kind", func(r *Registry) { r.Licensees[0].Documents = []Document{{Kind: "alvara"}} },
			[]string{"licensees[L1].documents[0].kind"}},
		{"driver document on a licensee", func(r *Registry) { r.Licensees[0].Documents = []Document{{Kind: DocCNH}} },
			[]string{"licensees[L1].documents[0].kind"}},
		{"document dates", func(r *Registry) {
			r.Licensees[0].Documents = []Document{{Kind: DocLicenca, Issued: MustDate("2026-02-01"), ValidUntil: MustDate("2026-01-31")}}
		}, []string{"licensees[L1].documents[0].valid_until"}},
		{"vehicle id", func(r *Registry) { r.Vehicles[0].ID = "PIU/001" }, []string{"vehicles[#1].id"}},
		{"vehicle id too long", func(r *Registry) { r.Vehicles[0].ID = strings.Repeat("x", 33) }, []string{"vehicles[#1].id"}},
		{"vehicle repeated", func(r *Registry) {
			r.Vehicles = append(r.Vehicles, Vehicle{ID: "PIU-001", Plate: "ABC1234", Licensee: "L1"})
		}, []string{"vehicles[PIU-001].id"}},
		{"plate", func(r *Registry) { r.Vehicles[0].Plate = "AB12345" }, []string{"vehicles[PIU-001].plate"}},
		{"plate missing", func(r *Registry) { r.Vehicles[0].Plate = "" }, []string{"vehicles[PIU-001].plate"}},
		{"plate repeated", func(r *Registry) {
			r.Vehicles = append(r.Vehicles, Vehicle{ID: "PIU-002", Plate: "abc-1d23", Licensee: "L1"})
		}, []string{"vehicles[PIU-002].plate"}},
		{"vehicle licensee unknown", func(r *Registry) { r.Vehicles[0].Licensee = "L9" }, []string{"vehicles[PIU-001].licensee"}},
		{"vehicle licensee missing", func(r *Registry) { r.Vehicles[0].Licensee = "" }, []string{"vehicles[PIU-001].licensee"}},
		{"year", func(r *Registry) { r.Vehicles[0].ManufactureYear = 1850 }, []string{"vehicles[PIU-001].manufacture_year"}},
		{"r1", func(r *Registry) { r.Vehicles[0].MeterDistanceM = -1 }, []string{"vehicles[PIU-001].meter_distance_m"}},
		{"cnh category of vehicle", func(r *Registry) { r.Vehicles[0].RequiredCNHCategory = "F" }, []string{"vehicles[PIU-001].required_cnh_category"}},
		{"device kind", func(r *Registry) { r.Vehicles[0].Devices[0].Kind = "radar" }, []string{"vehicles[PIU-001].devices[0].kind"}},
		{"device serial", func(r *Registry) { r.Vehicles[0].Devices[0].Serial = "" }, []string{"vehicles[PIU-001].devices[0].serial"}},
		{"device twice", func(r *Registry) {
			r.Vehicles = append(r.Vehicles, Vehicle{ID: "PIU-002", Plate: "ABC1234", Licensee: "L1",
				Devices: []Device{{Kind: DeviceGPS, Serial: "T1"}, {Kind: DeviceTachograph, Serial: "T1"}}})
		}, []string{"vehicles[PIU-002].devices[1].serial"}},
		{"device dates", func(r *Registry) {
			r.Vehicles[0].Devices[0].INMETROVerification = MustDate("2026-05-01")
			r.Vehicles[0].Devices[0].ValidUntil = MustDate("2026-04-30")
		}, []string{"vehicles[PIU-001].devices[0].valid_until"}},
		{"key without id", func(r *Registry) { r.Vehicles[0].PublicKey = strings.Repeat("A", 43) + "=" }, []string{"vehicles[PIU-001].key_id"}},
		{"id without key", func(r *Registry) { r.Vehicles[0].KeyID = "k1" }, []string{"vehicles[PIU-001].public_key"}},
		{"short key", func(r *Registry) { r.Vehicles[0].KeyID = "k1"; r.Vehicles[0].PublicKey = "AAAA" }, []string{"vehicles[PIU-001].public_key"}},
		{"driver id", func(r *Registry) { r.Drivers[0].ID = "" }, []string{"drivers[#1].id"}},
		{"name", func(r *Registry) { r.Drivers[0].Name = "" }, []string{"drivers[D1].name"}},
		{"cpf", func(r *Registry) { r.Drivers[0].CPF = "123.456.789-00" }, []string{"drivers[D1].cpf"}},
		{"cpf missing", func(r *Registry) { r.Drivers[0].CPF = "" }, []string{"drivers[D1].cpf"}},
		{"cpf repeated", func(r *Registry) {
			r.Drivers = append(r.Drivers, Driver{ID: "D2", Name: "João", CPF: "123.456.789-09", Licensee: "L1"})
		}, []string{"drivers[D2].cpf"}},
		{"cnh number", func(r *Registry) { r.Drivers[0].CNHNumber = "12345" }, []string{"drivers[D1].cnh_number"}},
		{"cnh category", func(r *Registry) { r.Drivers[0].CNHCategory = "BC" }, []string{"drivers[D1].cnh_category"}},
		{"medical certificate without end", func(r *Registry) {
			r.Drivers[0].MedicalCertificate.Issued = MustDate("2026-01-01")
		}, []string{"drivers[D1].medical_certificate.valid_until"}},
		{"card", func(r *Registry) { r.Drivers[0].TachographCard = "0000-86H101" }, []string{"drivers[D1].tachograph_card"}},
		{"card zeros", func(r *Registry) { r.Drivers[0].TachographCard = "00000000000000" }, []string{"drivers[D1].tachograph_card"}},
		{"card repeated", func(r *Registry) {
			r.Drivers = append(r.Drivers, Driver{ID: "D2", Name: "João", CPF: "98765432100", Licensee: "L1", TachographCard: "86H101"})
		}, []string{"drivers[D2].tachograph_card"}},
		{"card repeated in its 16-character form", func(r *Registry) {
			r.Drivers = append(r.Drivers, Driver{ID: "D2", Name: "João", CPF: "98765432100", Licensee: "L1", TachographCard: "0000000086H10100"})
		}, []string{"drivers[D2].tachograph_card"}},
		{"driver licensee", func(r *Registry) { r.Drivers[0].Licensee = "L2" }, []string{"drivers[D1].licensee"}},
		{"several at once", func(r *Registry) {
			r.Vehicles[0].Plate = "X"
			r.Drivers[0].CPF = "1"
			r.Licensees[0].RazaoSocial = ""
		}, []string{"licensees[L1].razao_social", "vehicles[PIU-001].plate", "drivers[D1].cpf"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := validRegistry()
			c.mutate(r)
			err := r.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v is not ErrInvalid", err)
			}
			var got []string
			for _, fe := range FieldErrors(err) {
				got = append(got, fe.Record+"."+fe.Field)
				if fe.Msg == "" {
					t.Errorf("%s.%s: empty message", fe.Record, fe.Field)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("errors at %q, want %q\n%v", got, c.want, err)
			}
		})
	}
}

func TestValidateCanonicalizes(t *testing.T) {
	r := validRegistry()
	r.Licensees[0].CNPJ = "12.abc.345/01de-35"
	r.Vehicles[0].Plate = "abc-1234"
	r.Vehicles[0].RequiredCNHCategory = "d"
	r.Drivers[0].CPF = "123.456.789-09"
	r.Drivers[0].CNHCategory = "ad"
	r.Drivers[0].TachographCard = " 0000000086h101 "
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Licensees[0].CNPJ != "12ABC34501DE35" || r.Vehicles[0].Plate != "ABC1234" || r.Vehicles[0].RequiredCNHCategory != "D" ||
		r.Drivers[0].CPF != "12345678909" || r.Drivers[0].CNHCategory != "AD" || r.Drivers[0].TachographCard != "0000000086H101" {
		t.Errorf("not canonical: %+v", r)
	}
}

func TestValidateKeepsCPFOutOfMessages(t *testing.T) {
	r := validRegistry()
	r.Drivers[0].CPF = "123.456.789-00"
	if err := r.Validate(); err == nil || strings.Contains(err.Error(), "456") {
		t.Errorf("error %v: want one that does not quote the CPF", err)
	}
}

func TestDate(t *testing.T) {
	d := MustDate("2026-02-28")
	if d.AddDays(1) != MustDate("2026-03-01") || d.AddDays(-59) != MustDate("2025-12-31") {
		t.Error("AddDays")
	}
	if d.DaysUntil(MustDate("2026-03-30")) != 30 || d.DaysUntil(MustDate("2026-02-27")) != -1 {
		t.Error("DaysUntil")
	}
	if !d.Before(MustDate("2026-03-01")) || d.Before(d) || d.Compare(d) != 0 {
		t.Error("Compare")
	}
	for _, bad := range []string{"2026-02-30", "26-02-01", "2026-2-1", "", "2026-02-01 "} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q): no error", bad)
		}
	}
	if (Date{}).String() != "" || !(Date{}).IsZero() {
		t.Error("zero Date")
	}
}
