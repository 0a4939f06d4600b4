// Package demo writes the settings the monitor uses for the demonstration of `make run`: the
// Piúma legal profile with demonstration service hours, the Piúma sample geofences with their
// itineraries valid at every hour, and a fictitious registry dated from the day of the
// demonstration. With them, the scripted day the simulator plays (`firmware-bridge simulate
// --scenario demo`, firmware-bridge/sim/demo.go) opens exactly the episodes its script lists,
// whatever the date and the hour it starts at.
//
// Demonstration settings are not the law: every file written here says so, and the profile's
// version carries "demonstração" into every draft made with it.
package demo

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
)

// Files are the paths of the demonstration settings, for TRENZINHO_PROFILE,
// TRENZINHO_GEOFENCES and TRENZINHO_REGISTRY.
type Files struct {
	Profile, Geofences, Registry string
	// Basemap is the street base map the dashboard draws when no map tiles load, for
	// TRENZINHO_BASEMAP: the sample streets (geofences.SampleStreets), a sample, not a survey.
	Basemap string
	// Start is the device time the simulator's scripted day must start at
	// (`firmware-bridge simulate --scenario demo --start`), RFC 3339.
	Start string
	// Vehicles are the ids of the scripted trains, in the order the simulator prints them.
	Vehicles []string

	previousRegistry []byte // what an earlier demonstration wrote to Registry
}

//go:embed registry.yaml.tmpl
var registryTemplate string

// Write writes the demonstration settings for a scripted day starting at start into dir
// (created), replacing the files of an earlier demonstration, and returns their paths.
func Write(dir string, start time.Time) (Files, error) {
	start = start.Truncate(time.Second)
	f := Files{
		Profile:   filepath.Join(dir, "profile.yaml"),
		Geofences: filepath.Join(dir, "geofences"),
		Registry:  filepath.Join(dir, "registry.yaml"),
		Basemap:   filepath.Join(dir, "basemap-sample-streets.geojson"),
		Start:     start.UTC().Format(time.RFC3339),
	}
	for _, v := range sim.Demo() {
		f.Vehicles = append(f.Vehicles, v.ID)
	}
	if err := os.MkdirAll(f.Geofences, 0o755); err != nil {
		return Files{}, fmt.Errorf("demo settings: %w", err)
	}
	prof, err := Profile(start)
	if err != nil {
		return Files{}, err
	}
	if err := os.WriteFile(f.Profile, prof, 0o644); err != nil {
		return Files{}, fmt.Errorf("demo settings: %w", err)
	}
	if err := writeGeofences(f.Geofences, start.UTC().Format(time.DateOnly)); err != nil {
		return Files{}, err
	}
	streets, err := fs.ReadFile(geofences.SampleStreetsFS(), "basemap/piuma-sample-streets.geojson")
	if err != nil {
		return Files{}, fmt.Errorf("demo settings: %w", err)
	}
	if err := os.WriteFile(f.Basemap, streets, 0o644); err != nil {
		return Files{}, fmt.Errorf("demo settings: %w", err)
	}
	reg, err := Registry(start)
	if err != nil {
		return Files{}, err
	}
	f.previousRegistry, _ = os.ReadFile(f.Registry)
	if err := os.WriteFile(f.Registry, reg, 0o600); err != nil {
		return Files{}, fmt.Errorf("demo settings: %w", err)
	}
	return f, nil
}

// VerificationWait is how long the demonstration's monitor holds the draft of an episode that
// grounds an auto only once an agent verifies it (TRENZINHO_DRAFT_VERIFICATION_WAIT; the
// monitor's default is a day): the draft of the loud detour's verified music comes about 150 s
// after the verification, within the demonstration rather than the next day.
const VerificationWait = 150 * time.Second

// MonitorEnv is the monitor's environment for the demonstration, beside the broker, the database
// and the listen address: the demonstration profile and geofences, the sample street map drawn
// when no tiles load, the short verification wait,
// and the public URL issued autos print for their verification page (the dashboard's own: empty,
// none).
func (f Files) MonitorEnv(publicURL string) []string {
	env := []string{"TRENZINHO_PROFILE=" + f.Profile, "TRENZINHO_GEOFENCES=" + f.Geofences, "TRENZINHO_BASEMAP=" + f.Basemap,
		"TRENZINHO_DRAFT_VERIFICATION_WAIT=" + VerificationWait.String()}
	if publicURL != "" {
		env = append(env, "TRENZINHO_PUBLIC_URL="+publicURL)
	}
	return env
}

// SyncRegistry brings an editable copy of the demonstration registry (the one the dashboard's
// Cadastro page edits) to the day of this demonstration: it writes the copy when there is none,
// and replaces it when it is what an earlier demonstration wrote, unedited — so that the
// registry's dates, counted from the day of the demonstration, say the same on every day. A copy
// edited by hand or through the dashboard is kept as it is.
func (f Files) SyncRegistry(copyPath string) error {
	old, err := os.ReadFile(copyPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("demo registry: %w", err)
	case !bytes.Equal(old, f.previousRegistry):
		return nil
	}
	b, err := os.ReadFile(f.Registry)
	if err != nil {
		return fmt.Errorf("demo registry: %w", err)
	}
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		return fmt.Errorf("demo registry: %w", err)
	}
	return nil
}

// Profile returns the Piúma profile with the demonstration's service hours: they end
// sim.DemoServiceEnd after start (rounded up to the minute, in Piúma's time), began twelve hours
// before, and have a grace of sim.DemoGrace instead of the law's twenty minutes, so that the
// scripted late return is late a few minutes into the demonstration. Every other number is the
// law's.
func Profile(start time.Time) ([]byte, error) {
	base := profile.PiumaYAML()
	p, err := profile.Parse(base, "piuma.yaml")
	if err != nil {
		return nil, err
	}
	end := start.In(p.Location()).Add(sim.DemoServiceEnd)
	if t := end.Truncate(time.Minute); !t.Equal(end) {
		end = t.Add(time.Minute)
	}
	from := end.Add(-12 * time.Hour)
	const law = `service_hours:
  start: "09:00"       # Art. 29
  end: "23:00"
  grace_min: 20        # going to / from the garage
`
	s := string(base)
	if !strings.Contains(s, law) {
		return nil, fmt.Errorf("demo profile: the service hours of the built-in profile changed; update internal/demo")
	}
	s = strings.Replace(s, law, fmt.Sprintf(`# CONFIGURAÇÃO DE DEMONSTRAÇÃO — não é a lei. O horário de serviço (Art. 29: 09:00 às 23:00,
# com 20 min de tolerância) foi trocado para que o dia roteirizado da demonstração comece na
# hora e o retorno atrasado seja atrasado alguns minutos depois (internal/demo).
service_hours:
  start: "%s"
  end: "%s"
  grace_min: %d
`, from.Format("15:04"), end.Format("15:04"), int(sim.DemoGrace/time.Minute)), 1)
	s = strings.Replace(s, "\nversion: \"", "\nversion: \"demonstração ", 1)
	for _, r := range demoActs {
		if !strings.Contains(s, r.law) {
			return nil, fmt.Errorf("demo profile: %s of the built-in profile changed; update internal/demo", r.what)
		}
		s = strings.Replace(s, r.law, r.demo, 1)
	}
	// The municipal holidays of the year of the demonstration and of the next, confirmed by no
	// one (issue refusal holidays_unconfirmed otherwise).
	const noConfirmation = "  confirmed: []\n"
	if !strings.Contains(s, noConfirmation) {
		return nil, fmt.Errorf("demo profile: the holidays' confirmation of the built-in profile changed; update internal/demo")
	}
	y := start.In(p.Location()).Year()
	s = strings.Replace(s, noConfirmation, fmt.Sprintf("  # %s: ninguém confirmou estes calendários.\n  confirmed:\n"+
		"    - {year: %d, by: \"%s (demonstração do make run)\", act: \"%s (calendário inexistente)\"}\n"+
		"    - {year: %d, by: \"%s (demonstração do make run)\", act: \"%s (calendário inexistente)\"}\n",
		Label, y, Label, Label, y+1, Label, Label), 1)
	s = "# PERFIL DE DEMONSTRAÇÃO de `make run` (internal/demo): o perfil de Piúma com o horário de\n" +
		"# serviço da demonstração e atos fictícios (" + Label + "). Não usar em autos de infração.\n" + s
	if _, err := profile.Parse([]byte(s), "demo-profile.yaml"); err != nil {
		return nil, fmt.Errorf("demo profile: %w", err)
	}
	return []byte(s), nil
}

// Label marks every demonstration value that stands for an act or a confirmation the
// municipality has not given: the profile, the dashboard and the PDFs print it.
const Label = "DEMONSTRAÇÃO — valor fictício"

// demoActs are the acts the issue of an auto needs (the fiscal unit's confirmation, the place
// and addressee of the defence) and the electronic notice's, which the built-in profile leaves
// empty until the municipality names them: the demonstration fills them with values labelled
// Label, so that `make run` can walk an auto from its issue to its decision. Each replaces the
// built-in profile's text exactly.
var demoActs = []struct{ what, law, demo string }{
	{"the fiscal unit's value", `note: valor ilustrativo — confirmar com a Secretaria de Fazenda}`,
		`note: "` + Label + `"}`},
	{"the fiscal unit's confirmation", "  confirmed_by: \"\"\n  act: \"\"\n",
		"  # " + Label + ": ninguém confirmou este valor; nenhum ato o publica.\n" +
			"  confirmed_by: \"" + Label + " (demonstração do make run)\"\n" +
			"  act: \"" + Label + " (ato inexistente)\"\n"},
	{"the acts of competence", "competence:\n  fiscal_organ_act: \"\"\n  authorities_act: \"\"\n  telemetry_act: \"\"\n",
		"competence:\n  # " + Label + ": nenhum destes atos existe.\n" +
			"  fiscal_organ_act: \"" + Label + " (ato inexistente que designa a Fiscalização de Posturas)\"\n" +
			"  authorities_act: \"" + Label + " (ato inexistente que designa a Autoridade Julgadora de Posturas)\"\n" +
			"  telemetry_act: \"" + Label + " (ato inexistente que adota a telemetria embarcada como meio de prova)\"\n"},
	{"the defence's addressee", "  to: \"\"\n  address: \"\"\n",
		"  # " + Label + ": destinatário e local fictícios.\n" +
			"  to: \"Autoridade Julgadora de Posturas (" + Label + ")\"\n" +
			"  address: \"Portal do permissionário deste monitor (" + Label + ")\"\n"},
	{"the electronic notice", "  electronic: false\n  electronic_act: \"\"\n",
		"  # " + Label + ": nenhum ato municipal adota a notificação eletrônica.\n" +
			"  electronic: true\n" +
			"  electronic_act: \"" + Label + " (ato inexistente que adota a notificação eletrônica)\"\n"},
}

// Registry returns the fictitious registry of the demonstration with its dates counted from
// the day of start in Piúma.
func Registry(start time.Time) ([]byte, error) {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return nil, err
	}
	local := start.In(loc)
	day0 := time.Date(local.Year(), local.Month(), local.Day(), 12, 0, 0, 0, loc)
	t, err := template.New("registry").Funcs(template.FuncMap{
		"day": func(n int) string { return day0.AddDate(0, 0, n).Format(time.DateOnly) },
	}).Parse(registryTemplate)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// writeGeofences copies the Piúma sample set into dir with every itinerary valid every day at
// every hour (the demonstration runs at any hour; the sample's days, hours and dates of
// validity would otherwise make a lawful trip a route deviation).
func writeGeofences(dir string, day string) error {
	fsys := geofences.SampleFS()
	names, err := fs.Glob(fsys, "piuma/*.geojson")
	if err != nil {
		return err
	}
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if b, err = demoFeatures(b, path.Base(name) == "itineraries.geojson", day); err != nil {
			return fmt.Errorf("demo geofences: %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, path.Base(name)), b, 0o644); err != nil {
			return fmt.Errorf("demo geofences: %w", err)
		}
	}
	// Outside every nbr_zone noise_limit is not evaluated (the Piúma profile names no default
	// area: the area type of an unzoned place is unknown). The sample's zones do not reach the
	// Pronto Atendimento, so the demonstration draws one around it, 230 m across its centre: the
	// detour's loud pass is inside it, every lawful trip (257 m away at the nearest) outside.
	zone, err := hospitalZone()
	if err == nil {
		zone, err = demoFeatures(zone, false, day)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "demo-zones.geojson"), zone, 0o644)
	}
	if err != nil {
		return fmt.Errorf("demo geofences: %w", err)
	}
	return nil
}

// hospitalZone is the demonstration's NBR 10151 zone around the sample's Pronto Atendimento
// Municipal (strict_residential: the area type of hospitals), an octagon of radius 230 m.
func hospitalZone() ([]byte, error) {
	const lon, lat, r = -40.7367515, -20.8371698, 230.0
	mPerDegLat := 110540.0
	mPerDegLon := 111320.0 * math.Cos(lat*math.Pi/180)
	var ring [][2]float64
	for i := 0; i <= 8; i++ {
		a := float64(i%8) * math.Pi / 4
		ring = append(ring, [2]float64{
			math.Round((lon+r*math.Cos(a)/mPerDegLon)*1e6) / 1e6,
			math.Round((lat+r*math.Sin(a)/mPerDegLat)*1e6) / 1e6,
		})
	}
	fc := map[string]any{"type": "FeatureCollection", "features": []any{map[string]any{
		"type": "Feature",
		"properties": map[string]any{
			"id": "z-demo-pronto-atendimento", "kind": "nbr_zone", "area": "strict_residential",
			"name":   "Entorno do Pronto Atendimento (demonstração)",
			"note":   "zona de demonstração do make run: fictícia, não usar em autos de infração",
			"source": "sample",
		},
		"geometry": map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}},
	}}}
	return json.Marshal(fc)
}

// demoFeatures marks every sample site of a feature collection as verified for the
// demonstration (source "demonstração", verified_by naming Label), so that an auto relying on
// one can be issued in `make run` (issue refusal site_unverified); closes every sensitive site
// that is not open day and night (its hours kept as sample_opening_hours), so that the day opens
// the same episodes at whatever hour `make run` starts (the music PIU-002 plays on its loop
// passes within 200 m of the library, which would otherwise add an episode while it is open);
// and, when anyHour, makes every feature valid every day at every hour.
func demoFeatures(b []byte, anyHour bool, day string) ([]byte, error) {
	var fc struct {
		Type     string           `json:"type"`
		Features []map[string]any `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, err
	}
	for _, f := range fc.Features {
		props, _ := f["properties"].(map[string]any)
		if props == nil {
			continue
		}
		if props["source"] == "sample" {
			props["source"] = "demonstração"
			props["verified_by"] = "Verificação fictícia (" + Label + ")"
			props["verified_at"] = day
		}
		if oh, ok := props["opening_hours"].(string); ok && props["kind"] == "sensitive" && oh != "24/7" {
			props["sample_opening_hours"] = oh
			props["opening_hours"] = "off"
			props["note"] = fmt.Sprint(props["note"]) + "; demonstração: fechado durante a demonstração, para que o dia mostre o mesmo a qualquer hora"
		}
		if !anyHour {
			continue
		}
		for _, k := range []string{"days", "hours", "valid_from", "valid_to"} {
			if v, ok := props[k]; ok {
				props["sample_"+k] = v
				delete(props, k)
			}
		}
		props["note"] = fmt.Sprint(props["note"]) + "; demonstração: válido todos os dias, a qualquer hora"
	}
	return json.MarshalIndent(fc, "", "  ")
}
