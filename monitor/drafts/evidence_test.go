package drafts_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

func vehicleKey(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s)
}

// rawBatch is one batch of PIU-001 as the monitor stores it, signed with k under kid (unsigned
// when k is nil).
func rawBatch(t *testing.T, seq uint64, kid string, k ed25519.PrivateKey) drafts.RawBatch {
	t.Helper()
	at := time.Date(2026, 11, 27, 10, 0, int(seq)*5, 0, time.UTC)
	b := &wire.Batch{V: 1, Vehicle: "PIU-001", Epoch: "e-1", Seq: seq, Clock: wire.ClockGPS, SentAt: wire.NewTime(at), Kid: kid,
		GPS: []wire.GPS{{T: wire.NewTime(at), Lat: -20.84, Lon: -40.73, Fix: wire.Fix3D}}}
	p, err := wire.Encode(b, k)
	if err != nil {
		t.Fatal(err)
	}
	return drafts.RawBatch{Vehicle: "PIU-001", Epoch: "e-1", Seq: seq, ReceivedAt: wire.NewTime(at.Add(time.Second)), Payload: string(p)}
}

func TestEvidenceSignatures(t *testing.T) {
	k1, k2 := vehicleKey(1), vehicleKey(2)
	registered := func(k ed25519.PrivateKey, kid string) batchsig.KeyLookup {
		return func(v string) (string, ed25519.PublicKey, bool) {
			if v != "PIU-001" {
				return "", nil, false
			}
			return kid, k.Public().(ed25519.PublicKey), true
		}
	}
	signed := func(n int, k ed25519.PrivateKey, kid string) []drafts.RawBatch {
		var out []drafts.RawBatch
		for i := range n {
			out = append(out, rawBatch(t, uint64(i+1), kid, k))
		}
		return out
	}
	forged := rawBatch(t, 9, "PIU-001-k1", k2)
	for _, tc := range []struct {
		name    string
		batches []drafts.RawBatch
		keys    batchsig.KeyLookup
		want    string
	}{
		{"none", nil, registered(k1, "PIU-001-k1"), ""},
		{"all signed", signed(3, k1, "PIU-001-k1"), registered(k1, "PIU-001-k1"), "todas assinadas e verificadas"},
		{"unsigned", signed(3, nil, ""), registered(k1, "PIU-001-k1"), "sem assinatura"},
		{"unsigned, no registry", signed(2, nil, ""), nil, "sem assinatura"},
		{"mixed", append(signed(2, k1, "PIU-001-k1"), rawBatch(t, 7, "", nil)), registered(k1, "PIU-001-k1"),
			"2 de 3 lotes assinados e verificados; 1 de 3 sem assinatura"},
		{"no key registered", signed(2, k1, "PIU-001-k1"), nil,
			"2 de 2 assinados com chave não cadastrada (assinatura não verificada)"},
		{"rotated key", signed(2, k1, "PIU-001-k1"), registered(k2, "PIU-001-k2"),
			"2 de 2 assinados com chave não cadastrada (assinatura não verificada)"},
		{"one forged", append(signed(1, k1, "PIU-001-k1"), forged), registered(k1, "PIU-001-k1"),
			"1 de 2 lotes assinados e verificados; 1 de 2 com assinatura inválida"},
	} {
		if got := drafts.EvidenceSignatures(tc.batches, tc.keys); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDraftRecordsSignedEvidence: a draft made from signed batches says so, in the draft and in
// the sealed bundle; the same batches without a registered key do not pass as verified.
func TestDraftRecordsSignedEvidence(t *testing.T) {
	k := vehicleKey(5)
	// The registry the monitor passes (drafts.Config.Registry): its keys are used by default.
	reg, err := registry.NewStore(&registry.Registry{
		Licensees: []registry.Licensee{{ID: "L1", RazaoSocial: "Trenzinho Teste Ltda", CNPJ: "11222333000181"}},
		Vehicles: []registry.Vehicle{{ID: "PIU-001", Plate: "ABC1D23", Licensee: "L1", KeyID: "PIU-001-k1",
			PublicKey: base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey))}},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		keys batchsig.KeyLookup
		reg  *registry.Store
		sign bool
		want string
	}{
		{"signed and registered", func(string) (string, ed25519.PublicKey, bool) {
			return "PIU-001-k1", k.Public().(ed25519.PublicKey), true
		}, nil, true, drafts.EvidenceAllSigned},
		{"signed, key in the registry", nil, reg, true, drafts.EvidenceAllSigned},
		{"signed, no key", nil, nil, true, "assinados com chave não cadastrada"},
		{"unsigned", nil, reg, false, drafts.EvidenceUnsigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			var key ed25519.PrivateKey
			if tc.sign {
				key = k
			}
			start := time.Date(2026, 11, 27, 10, 0, 0, 0, profile.Piuma().Location())
			end := playSigned(t, f, start, 120, 80, key)
			playSigned(t, f, end, 200, 50, key)
			f.verify(t, rules.VerifyMusic)
			f.verify(t, rules.VerifyNBR10151)
			d := drafts.NewDrafter(drafts.Config{Store: f.db, Profile: profile.Piuma(), ProfileYAML: profile.PiumaYAML(),
				Key: f.key, Software: "test", Settle: time.Minute, VehicleKey: tc.keys, Registry: tc.reg})
			made, err := d.Run(ctx, time.Now().Add(5*time.Minute))
			if err != nil || len(made) != 1 {
				t.Fatalf("%d drafts: %v", len(made), err)
			}
			if got := made[0].Draft.EvidenceSigned; !strings.Contains(got, tc.want) {
				t.Errorf("evidence_signed %q, want %q", got, tc.want)
			}
			b, err := drafts.Verify(&made[0].Sealed, f.key.Public().(ed25519.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			if b.Draft.EvidenceSigned != made[0].Draft.EvidenceSigned {
				t.Errorf("sealed draft says %q, stored draft %q", b.Draft.EvidenceSigned, made[0].Draft.EvidenceSigned)
			}
		})
	}
}

// playSigned is fixture.play with batches signed by k under kid PIU-001-k1 (unsigned when k is
// nil).
func playSigned(t *testing.T, f *fixture, start time.Time, seconds int, db float64, k ed25519.PrivateKey) time.Time {
	t.Helper()
	return fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: "PIU-001", Start: start, Key: k, Kid: "PIU-001-k1",
		Seconds: fleettest.Stand(-20.8400+50.0/110700, -40.7300, 5, db, seconds)})
}
