package registry

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // America/Sao_Paulo on machines without zoneinfo

	"github.com/trenzinho/trenzinho/internal/atomicfile"
)

// DefaultLocation is the time zone in which a Store judges calendar dates unless told
// otherwise ([Store.SetLocation]): a document valid until a day is valid through that day's
// last second in Piúma.
var DefaultLocation = mustLoadLocation("America/Sao_Paulo")

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("registry: " + err.Error())
	}
	return loc
}

// Store is the registry in memory. It is safe for concurrent use: readers never wait (each
// sees one consistent version), and edits are serialised, validated against the whole registry
// and written to the file before they become visible. Records it returns are copies.
//
// Several processes may edit one file (the monitor's API and `monitor vehicle add`): each
// edit holds an advisory lock on the file's directory, and applies to the file as it is on disk when the
// file changed since this Store last read or wrote it, so that no edit overwrites another.
type Store struct {
	path string // "" when edits are not persisted
	wmu  sync.Mutex
	cur  atomic.Pointer[snapshot]
	loc  atomic.Pointer[time.Location]
	disk [sha256.Size]byte // the file's content as last read or written; guarded by wmu
}

// snapshot is one immutable version of the registry with its indexes.
type snapshot struct {
	reg       *Registry
	licensees map[string]int // id → index
	vehicles  map[string]int
	drivers   map[string]int
	cardFull  map[string]int // card key (see cardKeys) → driver index
	cardIdent map[string]int
}

// Open loads the registry file at path into a Store whose edits are written back to it.
func Open(path string) (*Store, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r, err := Parse(b, path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, disk: sha256.Sum256(b)}
	s.loc.Store(DefaultLocation)
	s.cur.Store(newSnapshot(r))
	return s, nil
}

// NewStore makes a Store of r (which it copies and validates). Edits are written to the file at
// path, created on the first edit if needed; with an empty path they are kept in memory only.
func NewStore(r *Registry, path string) (*Store, error) {
	c := r.Clone()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	s := &Store{path: path}
	s.loc.Store(DefaultLocation)
	s.cur.Store(newSnapshot(c))
	return s, nil
}

func newSnapshot(r *Registry) *snapshot {
	s := &snapshot{
		reg:       r,
		licensees: make(map[string]int, len(r.Licensees)),
		vehicles:  make(map[string]int, len(r.Vehicles)),
		drivers:   make(map[string]int, len(r.Drivers)),
		cardFull:  map[string]int{},
		cardIdent: map[string]int{},
	}
	for i, l := range r.Licensees {
		s.licensees[l.ID] = i
	}
	for i, v := range r.Vehicles {
		s.vehicles[v.ID] = i
	}
	for i, d := range r.Drivers {
		s.drivers[d.ID] = i
		if d.TachographCard == "" {
			continue
		}
		full, ident := cardKeys(d.TachographCard)
		if full != "" {
			s.cardFull[full] = i
		}
		if ident != "" {
			s.cardIdent[ident] = i
		}
	}
	return s
}

// Path is the file edits are written to ("" when none).
func (s *Store) Path() string { return s.path }

// Location is the time zone in which dates are judged.
func (s *Store) Location() *time.Location { return s.loc.Load() }

// SetLocation sets the time zone in which dates are judged (the profile's).
func (s *Store) SetLocation(loc *time.Location) {
	if loc == nil {
		loc = DefaultLocation
	}
	s.loc.Store(loc)
}

// Reload reads the file again (after it was edited by hand) and replaces the registry if the
// file is valid; otherwise the registry in memory stays as it was.
func (s *Store) Reload() error {
	if s.path == "" {
		return errors.New("registry: reload: no file")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	r, err := Parse(b, s.path)
	if err != nil {
		return err
	}
	s.cur.Store(newSnapshot(r))
	s.disk = sha256.Sum256(b)
	return nil
}

// Snapshot returns a copy of the whole registry, personal data included.
func (s *Store) Snapshot() *Registry { return s.cur.Load().reg.Clone() }

// Licensee returns the licensee with the given id.
func (s *Store) Licensee(id string) (Licensee, bool) {
	sn := s.cur.Load()
	i, ok := sn.licensees[id]
	if !ok {
		return Licensee{}, false
	}
	return sn.reg.Licensees[i].clone(), true
}

// Vehicle returns the vehicle with the given id (its MQTT name).
func (s *Store) Vehicle(id string) (Vehicle, bool) {
	sn := s.cur.Load()
	i, ok := sn.vehicles[id]
	if !ok {
		return Vehicle{}, false
	}
	return sn.reg.Vehicles[i].clone(), true
}

// Driver returns the driver with the given id, personal data included: a read the API audits.
func (s *Store) Driver(id string) (Driver, bool) {
	sn := s.cur.Load()
	i, ok := sn.drivers[id]
	if !ok {
		return Driver{}, false
	}
	return sn.reg.Drivers[i], true
}

// DriverByCard returns the driver whose tachograph card matches card, the number as the
// tachograph reports it (see CardsMatch for the rule). A number that matches one driver
// exactly (leading zeros aside) wins over one that matches another only through its first 14
// characters.
func (s *Store) DriverByCard(card string) (Driver, bool) {
	sn := s.cur.Load()
	i, ok := sn.driverByCard(card)
	if !ok {
		return Driver{}, false
	}
	return sn.reg.Drivers[i], true
}

// driverByCard is the index of the driver whose card matches card.
func (sn *snapshot) driverByCard(card string) (int, bool) {
	full, ident := cardKeys(card)
	for _, k := range []string{full, ident} {
		if k == "" {
			continue
		}
		for _, m := range []map[string]int{sn.cardFull, sn.cardIdent} {
			if i, ok := m[k]; ok {
				return i, true
			}
		}
	}
	return 0, false
}

// Licensees lists the licensees.
func (s *Store) Licensees() []Licensee {
	sn := s.cur.Load()
	out := make([]Licensee, len(sn.reg.Licensees))
	for i, l := range sn.reg.Licensees {
		out[i] = l.clone()
	}
	return out
}

// Vehicles lists the vehicles.
func (s *Store) Vehicles() []Vehicle {
	sn := s.cur.Load()
	out := make([]Vehicle, len(sn.reg.Vehicles))
	for i, v := range sn.reg.Vehicles {
		out[i] = v.clone()
	}
	return out
}

// Drivers lists the drivers redacted (see Driver.Redacted). The whole record of one driver
// is read with Driver.
func (s *Store) Drivers() []Driver {
	sn := s.cur.Load()
	out := make([]Driver, len(sn.reg.Drivers))
	for i, d := range sn.reg.Drivers {
		out[i] = d.Redacted()
	}
	return out
}

// PutLicensee adds the licensee, or replaces the one with its id, and reports whether it was
// added. The registry is validated as a whole and written to the file before the change is
// visible; on any error nothing changes.
func (s *Store) PutLicensee(l Licensee) (created bool, err error) {
	err = s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Licensees, func(x Licensee) bool { return x.ID == l.ID })
		if created = i < 0; created {
			r.Licensees = append(r.Licensees, l.clone())
		} else {
			r.Licensees[i] = l.clone()
		}
		return nil
	})
	return created, err
}

// PutVehicleKeepingKey is PutVehicle for editors other than the key's owner (the API): the
// signing key (key_id, public_key) stays the one on file — none for a new vehicle — whatever v
// says, so that a form loaded before `monitor vehicle add --rotate` cannot put the old key back.
func (s *Store) PutVehicleKeepingKey(v Vehicle) (created bool, err error) {
	err = s.update(func(r *Registry) error {
		v := v.clone()
		v.KeyID, v.PublicKey = "", ""
		i := slices.IndexFunc(r.Vehicles, func(x Vehicle) bool { return x.ID == v.ID })
		if created = i < 0; created {
			r.Vehicles = append(r.Vehicles, v)
		} else {
			v.KeyID, v.PublicKey = r.Vehicles[i].KeyID, r.Vehicles[i].PublicKey
			r.Vehicles[i] = transferred(r.Vehicles[i], v, DateOf(time.Now().In(registryZone)))
		}
		return nil
	})
	return created, err
}

// PutVehicle adds the vehicle, or replaces the one with its id, as PutLicensee does.
func (s *Store) PutVehicle(v Vehicle) (created bool, err error) {
	err = s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Vehicles, func(x Vehicle) bool { return x.ID == v.ID })
		if created = i < 0; created {
			r.Vehicles = append(r.Vehicles, v.clone())
		} else {
			r.Vehicles[i] = transferred(r.Vehicles[i], v.clone(), DateOf(time.Now().In(registryZone)))
		}
		return nil
	})
	return created, err
}

// PutDriver adds the driver, or replaces the one with its id, as PutLicensee does.
func (s *Store) PutDriver(d Driver) (created bool, err error) {
	err = s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Drivers, func(x Driver) bool { return x.ID == d.ID })
		if created = i < 0; created {
			r.Drivers = append(r.Drivers, d)
		} else {
			r.Drivers[i] = d
		}
		return nil
	})
	return created, err
}

// DeleteLicensee removes a licensee that has no vehicles and no drivers left (ErrInUse
// otherwise).
func (s *Store) DeleteLicensee(id string) error {
	return s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Licensees, func(x Licensee) bool { return x.ID == id })
		if i < 0 {
			return fmt.Errorf("licenciado %q: %w", id, ErrNotFound)
		}
		var users []string
		for _, v := range r.Vehicles {
			if v.Licensee == id {
				users = append(users, "veículo "+v.ID)
			}
		}
		for _, d := range r.Drivers {
			if d.Licensee == id {
				users = append(users, "condutor "+d.ID)
			}
		}
		if len(users) > 0 {
			return fmt.Errorf("licenciado %s tem %s: %w", id, strings.Join(users, ", "), ErrInUse)
		}
		r.Licensees = slices.Delete(r.Licensees, i, i+1)
		return nil
	})
}

// DeleteVehicle removes a vehicle.
func (s *Store) DeleteVehicle(id string) error {
	return s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Vehicles, func(x Vehicle) bool { return x.ID == id })
		if i < 0 {
			return fmt.Errorf("veículo %q: %w", id, ErrNotFound)
		}
		r.Vehicles = slices.Delete(r.Vehicles, i, i+1)
		return nil
	})
}

// DeleteDriver removes a driver that no vehicle has as its assigned driver (ErrInUse
// otherwise).
func (s *Store) DeleteDriver(id string) error {
	return s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Drivers, func(x Driver) bool { return x.ID == id })
		if i < 0 {
			return fmt.Errorf("condutor %q: %w", id, ErrNotFound)
		}
		var users []string
		for _, v := range r.Vehicles {
			if v.Driver == id {
				users = append(users, "veículo "+v.ID)
			}
		}
		if len(users) > 0 {
			return fmt.Errorf("condutor %s é o designado de %s: %w", id, strings.Join(users, ", "), ErrInUse)
		}
		r.Drivers = slices.Delete(r.Drivers, i, i+1)
		return nil
	})
}

// Replace replaces the whole registry with a copy of r, validated and written as an edit is.
func (s *Store) Replace(r *Registry) error {
	return s.update(func(cur *Registry) error {
		*cur = *r.Clone()
		return nil
	})
}

// update applies fn to a copy of the registry, validates the result, writes it to the file
// and only then publishes it.
func (s *Store) update(fn func(r *Registry) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var prev []byte // the file as it is, whose comments and layout the edit keeps
	if s.path != "" {
		unlock, err := lockDir(filepath.Dir(s.path))
		if err != nil {
			return fmt.Errorf("registry: lock: %w", err)
		}
		defer unlock()
		// Another process (or a person) may have written the file since we read it: edit
		// what is there, never an older copy.
		b, err := os.ReadFile(s.path)
		prev = b
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("registry: %w", err)
		case sha256.Sum256(b) != s.disk:
			r, err := Parse(b, s.path)
			if err != nil {
				return fmt.Errorf("registry: the file was changed outside this program and is invalid; fix it first: %w", err)
			}
			s.cur.Store(newSnapshot(r))
			s.disk = sha256.Sum256(b)
		}
	}
	r := s.cur.Load().reg.Clone()
	if err := fn(r); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if s.path != "" {
		b, err := r.MarshalOver(prev)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(s.path, b, 0o600); err != nil { // 0600 when new: personal data
			return fmt.Errorf("registry: save: %w", err)
		}
		s.disk = sha256.Sum256(b)
	}
	s.cur.Store(newSnapshot(r))
	return nil
}

// registryZone is the zone of the day a licensee change through PutVehicle takes effect: the
// municipality's (the registry has no profile; Piúma's zone is Brazil's official time).
var registryZone = func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return time.FixedZone("BRT", -3*3600)
	}
	return loc
}()

// TransferVehicle changes a vehicle's licensee from day on: the old link ends the day before.
// Readings of earlier days stay the old licensee's.
func (s *Store) TransferVehicle(id, licensee string, on Date) error {
	return s.update(func(r *Registry) error {
		i := slices.IndexFunc(r.Vehicles, func(x Vehicle) bool { return x.ID == id })
		if i < 0 {
			return fmt.Errorf("registry: vehicle %q: %w", id, ErrNotFound)
		}
		v := r.Vehicles[i].clone()
		if !v.LicenseeSince.IsZero() && on.Before(v.LicenseeSince.AddDays(1)) {
			return fmt.Errorf("registry: vehicle %q: transfer on %s is not after the current link's start %s", id, on, v.LicenseeSince)
		}
		v.Licensee, v.LicenseeSince = licensee, Date{}
		v.LicenseeHistory = nil
		old := r.Vehicles[i]
		v = transferred(old, v, on)
		if v.LicenseeHistory == nil {
			v.LicenseeHistory = old.LicenseeHistory
		}
		r.Vehicles[i] = v
		return nil
	})
}
