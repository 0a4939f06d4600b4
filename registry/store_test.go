package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// openCopy copies the example into a temporary directory and opens it.
func openCopy(t testing.TB) *Store {
	t.Helper()
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "registry.yaml")
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreLookups(t *testing.T) {
	s := openCopy(t)
	if v, ok := s.Vehicle("PIU-002"); !ok || v.Plate != "MTA1234" || v.Licensee != "L1" {
		t.Errorf("Vehicle(PIU-002) = %+v, %v", v, ok)
	}
	if _, ok := s.Vehicle("PIU-009"); ok {
		t.Error("unknown vehicle found")
	}
	if l, ok := s.Licensee("L2"); !ok || l.CNPJ != "12ABC34501DE35" {
		t.Errorf("Licensee(L2) = %+v, %v", l, ok)
	}
	if d, ok := s.Driver("D2"); !ok || d.CPF != "98765432100" || d.Name != "João Carlos Ferreira" {
		t.Errorf("Driver(D2) = %+v, %v", d, ok)
	}
	// Records returned are copies.
	v, _ := s.Vehicle("PIU-001")
	v.Devices[0].Serial = "changed"
	v.Documents[0].Number = "changed"
	if v2, _ := s.Vehicle("PIU-001"); v2.Devices[0].Serial == "changed" || v2.Documents[0].Number == "changed" {
		t.Error("Vehicle returns the store's own slices")
	}
	if len(s.Licensees()) != 2 || len(s.Vehicles()) != 3 || len(s.Drivers()) != 3 {
		t.Error("lists are incomplete")
	}
}

func TestDriverByCard(t *testing.T) {
	s := openCopy(t)
	for _, card := range []string{"0000000086H101", "86H101", "0000000086H10100", "000000000086H101", "0000000086h101"} {
		if d, ok := s.DriverByCard(card); !ok || d.ID != "D1" {
			t.Errorf("DriverByCard(%q) = %q, %v; want D1", card, d.ID, ok)
		}
	}
	if d, ok := s.DriverByCard("0000000077B30301"); !ok || d.ID != "D3" {
		t.Errorf("DriverByCard(D3's 16-character number) = %q, %v", d.ID, ok)
	}
	for _, card := range []string{"", "0000000000000000", "0000000086H102", "garbage!"} {
		if d, ok := s.DriverByCard(card); ok {
			t.Errorf("DriverByCard(%q) = %q", card, d.ID)
		}
	}
}

func TestDriverByCardPrefersExactMatch(t *testing.T) {
	// D9's number is the first 14 characters of the VDO-padded form of D1's, so the padded
	// form matches D1 exactly and D9 only through its first 14 characters.
	r := validRegistry()
	r.Drivers = append(r.Drivers, Driver{ID: "D9", Name: "X", CPF: "98765432100", Licensee: "L1", TachographCard: "000000000086H1"})
	s, err := NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := s.DriverByCard("000000000086H101"); d.ID != "D1" {
		t.Errorf("padded number matched %q, want D1", d.ID)
	}
	if d, _ := s.DriverByCard("86H1"); d.ID != "D9" {
		t.Errorf("86H1 matched %q, want D9", d.ID)
	}
}

func TestDriversAreRedacted(t *testing.T) {
	s := openCopy(t)
	for _, d := range s.Drivers() {
		if d.ID == "D1" {
			if d.Name != "Maria A. S." || d.CPF != "***.456.789-**" || d.CNHNumber != "***" || d.TachographCard != "**********H101" {
				t.Errorf("redacted D1 = %+v", d)
			}
			if d.CNHCategory != "D" || d.MedicalCertificate.IsZero() {
				t.Errorf("redaction removed operational data: %+v", d)
			}
			if _, err := s.PutDriver(d); err == nil {
				t.Error("a redacted driver was saved")
			}
		}
	}
	if d, _ := s.Driver("D1"); d.CPF != "12345678909" {
		t.Error("Driver is redacted")
	}
}

func TestPutPersists(t *testing.T) {
	s := openCopy(t)
	created, err := s.PutVehicle(Vehicle{ID: "PIU-004", Plate: "abc-9876", Licensee: "L2",
		Documents: []Document{{Kind: DocInspecao, ValidUntil: MustDate("2027-05-01")}}})
	if err != nil || !created {
		t.Fatalf("PutVehicle = %v, %v", created, err)
	}
	created, err = s.PutDriver(Driver{ID: "D1", Name: "Maria A. dos Santos", CPF: "12345678909", Licensee: "L1",
		TachographCard: "0000000086H101", CNHCategory: "E"})
	if err != nil || created {
		t.Fatalf("PutDriver(existing) = %v, %v", created, err)
	}
	if _, err := s.PutLicensee(Licensee{ID: "L3", RazaoSocial: "Nova Ltda", CNPJ: "11.444.777/0001-61"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDriver("D3"); err != nil {
		t.Fatal(err)
	}

	// The file holds exactly what the store holds.
	r, err := Load(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, s.Snapshot()) {
		t.Error("file and store differ")
	}
	if v, _ := s.Vehicle("PIU-004"); v.Plate != "ABC9876" {
		t.Errorf("plate stored as %q", v.Plate)
	}
	if d, _ := s.Driver("D1"); d.CNHCategory != "E" || d.Name != "Maria A. dos Santos" {
		t.Errorf("D1 not replaced: %+v", d)
	}
	if _, ok := s.Driver("D3"); ok {
		t.Error("D3 not deleted")
	}
	if fi, _ := os.Stat(s.Path()); fi.Mode().Perm() != 0o640 {
		t.Errorf("file mode %v, want the original 0640", fi.Mode().Perm())
	}
	// No temporary files are left.
	ents, _ := os.ReadDir(filepath.Dir(s.Path()))
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want the registry alone", len(ents))
	}
	// A new store on the file sees the same.
	s2, err := Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s2.Snapshot(), s.Snapshot()) {
		t.Error("reopened store differs")
	}
}

func TestInvalidEditChangesNothing(t *testing.T) {
	s := openCopy(t)
	before, _ := os.ReadFile(s.Path())
	snap := s.Snapshot()

	_, err := s.PutVehicle(Vehicle{ID: "PIU-004", Plate: "ABC1D23", Licensee: "L9"})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("PutVehicle(bad) = %v, want ErrInvalid", err)
	}
	var got []string
	for _, fe := range FieldErrors(err) {
		got = append(got, fe.Record+"."+fe.Field)
	}
	if want := []string{"vehicles[PIU-004].plate", "vehicles[PIU-004].licensee"}; !reflect.DeepEqual(got, want) {
		t.Errorf("errors at %q, want %q", got, want)
	}
	if err := s.DeleteLicensee("L1"); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "PIU-001") {
		t.Errorf("DeleteLicensee(in use) = %v", err)
	}
	if err := s.DeleteVehicle("PIU-404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteVehicle(unknown) = %v", err)
	}
	if err := s.DeleteDriver("D404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteDriver(unknown) = %v", err)
	}
	if err := s.DeleteLicensee("L404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteLicensee(unknown) = %v", err)
	}
	after, _ := os.ReadFile(s.Path())
	if string(before) != string(after) {
		t.Error("a refused edit wrote the file")
	}
	if !reflect.DeepEqual(snap, s.Snapshot()) {
		t.Error("a refused edit changed the store")
	}
}

func TestWriteFailureChangesNothing(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only directories")
	}
	s := openCopy(t)
	dir := filepath.Dir(s.Path())
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, err := s.PutLicensee(Licensee{ID: "L3", RazaoSocial: "X", CNPJ: "11444777000161"}); err == nil {
		t.Fatal("edit succeeded in a read-only directory")
	}
	if _, ok := s.Licensee("L3"); ok {
		t.Error("an edit that could not be saved is visible")
	}
}

func TestDeleteLicenseeAndSymlink(t *testing.T) {
	s := openCopy(t)
	link := filepath.Join(t.TempDir(), "link.yaml")
	if err := os.Symlink(s.Path(), link); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(link)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { return s2.DeleteDriver("D3") },
		func() error { return s2.DeleteVehicle("PIU-003") },
		func() error { return s2.DeleteLicensee("L2") },
	} {
		if err := op(); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symbolic link was replaced")
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Licensee("L2"); ok {
		t.Error("L2 still in the target file")
	}
}

func TestReload(t *testing.T) {
	s := openCopy(t)
	b, _ := os.ReadFile(s.Path())
	edited := strings.Replace(string(b), "plate: MTA1234", "plate: MTA4321", 1)
	if err := os.WriteFile(s.Path(), []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Vehicle("PIU-002"); v.Plate != "MTA4321" {
		t.Errorf("plate after reload %q", v.Plate)
	}
	// An invalid file is refused and the store keeps what it had.
	if err := os.WriteFile(s.Path(), []byte(strings.Replace(edited, "MTA4321", "M", 1)), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "vehicles[PIU-002].plate") {
		t.Errorf("Reload(invalid) = %v", err)
	}
	if v, _ := s.Vehicle("PIU-002"); v.Plate != "MTA4321" {
		t.Errorf("plate after failed reload %q", v.Plate)
	}
}

func TestNewStoreInMemory(t *testing.T) {
	s, err := NewStore(&Registry{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutLicensee(Licensee{ID: "L1", RazaoSocial: "X", CNPJ: "11222333000181"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Licensee("L1"); !ok {
		t.Error("in-memory edit lost")
	}
	if _, err := NewStore(&Registry{Vehicles: []Vehicle{{ID: "V"}}}, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewStore(invalid) = %v", err)
	}
	// A new file is created on the first edit, readable by its owner only.
	path := filepath.Join(t.TempDir(), "new.yaml")
	s, _ = NewStore(&Registry{}, path)
	if _, err := s.PutLicensee(Licensee{ID: "L1", RazaoSocial: "X", CNPJ: "11222333000181"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v, %v", fi, err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
}

func TestReplace(t *testing.T) {
	s := openCopy(t)
	r := s.Snapshot()
	r.Vehicles = r.Vehicles[:1]
	r.Drivers[0].TachographCard = "86H101"
	if err := s.Replace(r); err != nil {
		t.Fatal(err)
	}
	r.Vehicles[0].Plate = "changed after Replace"
	if v, _ := s.Vehicle("PIU-001"); v.Plate != "ABC1D23" {
		t.Error("Replace kept the caller's registry")
	}
	if len(s.Vehicles()) != 1 {
		t.Error("Replace did not replace")
	}
	bad := s.Snapshot()
	bad.Drivers[0].Licensee = "nobody"
	if err := s.Replace(bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("Replace(invalid) = %v", err)
	}
}

func TestUnquotedNumbers(t *testing.T) {
	// Numbers written without quotes keep their leading zeros.
	in := `
licensees:
  - {id: L1, razao_social: X, cnpj: 01234567000103}
drivers:
  - {id: D1, name: Y, cpf: 01234567890, cnh_number: 01234567890, tachograph_card: 00000123, licensee: L1}
`
	cnpj, _ := CNPJCheckDigits("012345670001")
	in = strings.Replace(in, "01234567000103", "012345670001"+cnpj, 1)
	r, err := Parse([]byte(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Drivers[0]; d.CPF != "01234567890" || d.CNHNumber != "01234567890" || d.TachographCard != "00000123" {
		t.Errorf("driver %+v", d)
	}
	if r.Licensees[0].CNPJ != "012345670001"+cnpj {
		t.Errorf("cnpj %q", r.Licensees[0].CNPJ)
	}
}

// TestConcurrent reads while edits are made; run with -race.
func TestConcurrent(t *testing.T) {
	s := openCopy(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := s.Vehicle("PIU-001"); !ok {
					t.Error("PIU-001 vanished")
					return
				}
				if d, ok := s.DriverByCard("0000000086H10100"); !ok || d.ID != "D1" {
					t.Error("card lookup failed during edits")
					return
				}
				_ = s.Expiring(exampleNow, month)
				_ = s.ExpiredFor("PIU-003", "0000000077B303", exampleNow)
				_ = s.Drivers()
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Go(func() {
			for i := range 6 {
				id := fmt.Sprintf("W%d-%d", w, i)
				if _, err := s.PutVehicle(Vehicle{ID: id, Plate: fmt.Sprintf("ABC%d%03d", w, i), Licensee: "L1"}); err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					if err := s.DeleteVehicle(id); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if n := len(s.Vehicles()); n != 3+3*3 {
		t.Errorf("%d vehicles, want %d", n, 3+3*3)
	}
	r, err := Load(s.Path())
	if err != nil || len(r.Vehicles) != 3+3*3 {
		t.Errorf("file: %v", err)
	}
}

// Two programs editing one file (the monitor's API and `monitor vehicle add`) never overwrite
// each other's edits: a stale store edits the file as it is on disk.
func TestTwoStoresOnOneFile(t *testing.T) {
	a := openCopy(t)
	b, err := Open(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	// One after the other: b adds a vehicle, then a, which has not seen it, adds another.
	if _, err := b.PutVehicle(Vehicle{ID: "B-1", Plate: "BBB1111", Licensee: "L1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutVehicle(Vehicle{ID: "A-1", Plate: "AAA1111", Licensee: "L1"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Vehicle("B-1"); !ok {
		t.Error("a's edit did not pick up b's vehicle from the file")
	}
	// At once, from both.
	var wg sync.WaitGroup
	for w, s := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for i := range 10 {
				id := fmt.Sprintf("C%d-%d", w, i)
				if _, err := s.PutVehicle(Vehicle{ID: id, Plate: fmt.Sprintf("CDE%d%03d", w, i), Licensee: "L1"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r, err := Load(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + 2 + 40; len(r.Vehicles) != want {
		t.Errorf("file holds %d vehicles, want %d: edits were lost", len(r.Vehicles), want)
	}

	// A hand edit that breaks the file stops further edits instead of being overwritten.
	if err := os.WriteFile(a.Path(), []byte("vehicles: [{id: X}]\nnonsense: 1\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutVehicle(Vehicle{ID: "A-2", Plate: "AAA2222", Licensee: "L1"}); err == nil {
		t.Error("an edit over an invalid file succeeded")
	}
	if got, _ := os.ReadFile(a.Path()); string(got) != "vehicles: [{id: X}]\nnonsense: 1\n" {
		t.Error("the invalid file was overwritten")
	}
}

// An editor other than `monitor vehicle add` never changes a vehicle's signing key: a form
// loaded before a rotation cannot put the old key back, nor a new vehicle bring its own.
func TestPutVehicleKeepingKey(t *testing.T) {
	s := openCopy(t)
	v, _ := s.Vehicle("PIU-001")
	if v.KeyID == "" {
		t.Fatal("the example's PIU-001 has no key")
	}
	stale := v
	stale.KeyID, stale.PublicKey, stale.Plate = "PIU-001-2019", strings.Repeat("B", 43)+"=", "ABC9F99"
	if created, err := s.PutVehicleKeepingKey(stale); err != nil || created {
		t.Fatal(created, err)
	}
	got, _ := s.Vehicle("PIU-001")
	if got.KeyID != v.KeyID || got.PublicKey != v.PublicKey || got.Plate != "ABC9F99" {
		t.Errorf("after the edit: key %s %s, plate %s", got.KeyID, got.PublicKey, got.Plate)
	}
	nv := Vehicle{ID: "PIU-009", Plate: "ABC9G99", Licensee: "L1", KeyID: "k", PublicKey: v.PublicKey}
	if created, err := s.PutVehicleKeepingKey(nv); err != nil || !created {
		t.Fatal(created, err)
	}
	if got, _ := s.Vehicle("PIU-009"); got.KeyID != "" || got.PublicKey != "" {
		t.Errorf("a new vehicle brought its key: %+v", got)
	}
}
