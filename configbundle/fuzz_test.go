package configbundle_test

import (
	"crypto/ed25519"
	"testing"

	"github.com/trenzinho/trenzinho/configbundle"
)

// FuzzOpen: no input makes Parse or Open panic, and whatever Open accepts carries the pinned
// key's signature, is for the vehicle, and validates. The corpus is in testdata/fuzz/FuzzOpen.
func FuzzOpen(f *testing.F) {
	seed := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	pub := seed.Public().(ed25519.PublicKey)
	b := testBundle(f)
	if msg, err := configbundle.Sign(b, seed); err == nil {
		f.Add(msg)
		f.Add(msg[:len(msg)-3])
	}
	withDocs := *b
	withDocs.Documents = []configbundle.Document{{Holder: configbundle.HolderVehicle, Kind: "inspecao", ValidUntil: "2026-12-05"},
		{Holder: configbundle.HolderLicensee, Kind: "licenca", ValidUntil: "2026-11-30"}}
	if msg, err := configbundle.Sign(&withDocs, seed); err == nil {
		f.Add(msg)
	}
	f.Add([]byte(`{"alg":"ed25519","enc":"gzip","payload":"H4sIAAAAAAAA/w==","sig":""}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		configbundle.Parse(msg)
		got, err := configbundle.Open(msg, pub, "PIU-001", t0)
		if err != nil {
			return
		}
		if got.Vehicle != "PIU-001" || got.Validate() != nil || !t0.Before(got.ValidUntil) {
			t.Fatalf("accepted %+v", got)
		}
	})
}
