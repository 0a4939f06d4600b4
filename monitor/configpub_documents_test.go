package main

import (
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// TestBundleDocuments: the bundle carries the dated documents of the vehicle and of its
// licensee as the registry holds them — of several of one kind the one valid the longest, none
// without an end date, none of another licensee — and the document warning's days; a renewal
// in the registry changes the bundle's content (a new version is issued).
func TestBundleDocuments(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	r := &registry.Registry{
		Licensees: []registry.Licensee{
			{ID: "L1", RazaoSocial: "Trenzinho Um Ltda", CNPJ: "11222333000181", Documents: []registry.Document{
				{Kind: registry.DocLicenca, Number: "LIC-1", ValidUntil: registry.MustDate("2026-12-10")}}},
			{ID: "L2", RazaoSocial: "Trenzinho Dois Ltda", CNPJ: "11444777000161", Documents: []registry.Document{
				{Kind: registry.DocLicenca, Number: "LIC-2", ValidUntil: registry.MustDate("2026-12-01")}}},
		},
		Vehicles: []registry.Vehicle{{ID: "PIU-001", Plate: "ABC1D23", Licensee: "L1", Documents: []registry.Document{
			{Kind: registry.DocInspecao, ValidUntil: registry.MustDate("2025-12-01")},
			{Kind: registry.DocInspecao, ValidUntil: registry.MustDate("2026-12-05")}, // the renewal counts
			{Kind: registry.DocInspecao, ValidUntil: registry.MustDate("2026-06-01")},
			{Kind: registry.DocCSV}, // no end date: never expires
		}}},
	}
	reg, err := registry.NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	p := &bundler{cfg: bundleConfig{validity: 30 * 24 * time.Hour, leadM: 300, speedMargin: 2, documentDays: 15}, key: key,
		profileID: "piuma", profileYAML: string(profile.PiumaYAML()), set: set, reg: reg,
		now: time.Now, geo: map[string]json.RawMessage{}, issued: map[string]issued{}}
	v, _ := reg.Vehicle("PIU-001")
	b, digest, err := p.bundle(v)
	if err != nil {
		t.Fatal(err)
	}
	want := []configbundle.Document{
		{Holder: configbundle.HolderVehicle, Kind: "inspecao", ValidUntil: "2026-12-05"},
		{Holder: configbundle.HolderLicensee, Kind: "licenca", ValidUntil: "2026-12-10"},
	}
	if !slices.Equal(b.Documents, want) || b.Settings.Warnings.DocumentExpiryDays != 15 {
		t.Fatalf("documents %+v (days %d), want %+v (15)", b.Documents, b.Settings.Warnings.DocumentExpiryDays, want)
	}
	msg, err := p.sign(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := configbundle.Open(msg, key.Public().(ed25519.PublicKey), "PIU-001", time.Now())
	if err != nil || !slices.Equal(got.Documents, want) {
		t.Fatalf("opened: %v, documents %+v", err, got)
	}
	t.Logf("signed bundle with %d documents: %d bytes", len(want), len(msg))

	r.Vehicles[0].Documents = append(r.Vehicles[0].Documents, registry.Document{Kind: registry.DocInspecao, ValidUntil: registry.MustDate("2027-12-05")})
	reg2, err := registry.NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	p.reg = reg2
	v, _ = reg2.Vehicle("PIU-001")
	if _, d2, err := p.bundle(v); err != nil || d2 == digest {
		t.Fatalf("a renewed inspection left the bundle's content unchanged (err %v)", err)
	}
}

// TestBundleRefusesBadDocuments: a bundle whose documents are not dated documents of the
// vehicle or its licensee is malformed.
func TestBundleRefusesBadDocuments(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	for name, d := range map[string]configbundle.Document{
		"no date":    {Holder: configbundle.HolderVehicle, Kind: "inspecao"},
		"bad date":   {Holder: configbundle.HolderVehicle, Kind: "inspecao", ValidUntil: "2026-13-01"},
		"holder":     {Holder: "driver", Kind: "cnh", ValidUntil: "2026-12-01"},
		"empty kind": {Holder: configbundle.HolderLicensee, ValidUntil: "2026-12-01"},
	} {
		b := &configbundle.Bundle{Format: configbundle.Format, Vehicle: "PIU-001", Version: 1, IssuedAt: now, ValidUntil: now.Add(time.Hour),
			Documents: []configbundle.Document{d}}
		if err := b.Validate(); err == nil {
			t.Errorf("%s: %+v accepted", name, d)
		}
	}
}
