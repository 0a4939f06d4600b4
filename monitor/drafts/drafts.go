// Package drafts turns episodes into drafts of autos de infração: one draft per fact per
// penalty (docs/rules.md, "One draft per conduct"; docs/penalty.md), with the evidence frozen into a bundle when the draft is made, hashed,
// signed with the monitor's ed25519 key and chained to the previous draft's hash, so that any
// later edit of the database shows. The machine drafts; a person decides.
package drafts

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Statuses of a draft and of the case it becomes.
const (
	StatusDraft     = "draft"     // made by the machine, waiting for an agent
	StatusIssued    = "issued"    // the agent issued the notice
	StatusDismissed = "dismissed" // the agent dismissed it, with a reason
)

// Draft is a draft of an auto de infração: the facts (episodes) of one vehicle that overlap in
// time and share a penalty, with everything the agent needs to check and sign it.
type Draft struct {
	ID           string    `json:"id"`
	EpisodeIDs   []string  `json:"episode_ids"`
	Vehicle      string    `json:"vehicle"`
	Licensee     string    `json:"licensee,omitempty"`
	Unregistered bool      `json:"unregistered,omitempty"` // "veículo não cadastrado"
	Rules        []string  `json:"rules"`
	Articles     []string  `json:"articles"`
	Penalty      string    `json:"penalty"`
	FineUFMP     float64   `json:"fine_ufmp"`
	FiscalUnit   string    `json:"fiscal_unit"`
	Start        wire.Time `json:"start"`
	End          wire.Time `json:"end"`
	Facts        []Fact    `json:"facts"`
	Municipality string    `json:"municipality"`
	FiscalOrgan  string    `json:"fiscal_organ"`
	Law          string    `json:"law"`
	CreatedAt    wire.Time `json:"created_at"`
	Software     string    `json:"software_version"`
	ProfileID    string    `json:"profile_id"`
	ProfileVer   string    `json:"profile_version"`
	// Warnings are what the agent must know before relying on the draft (a boarding point or
	// public road of sample or unverified data, an estimated value, an interrupted episode, …),
	// in Portuguese.
	Warnings []string `json:"warnings,omitempty"`
	// EvidenceSigned says, in Portuguese, whether the vehicle signed the raw batches of the
	// bundle, as verified with its registered key when the draft was made:
	// "todas assinadas e verificadas", "sem assinatura", or the counts of each kind
	// (EvidenceSignatures). Absent when the bundle holds no batch.
	EvidenceSigned string `json:"evidence_signed,omitempty"`
	// Registry is what the registry said of the vehicle, its licensee and its devices when the
	// draft was made; nil without a registry or for a vehicle it does not know.
	Registry *Registered `json:"registry,omitempty"`
	// Driver is the driver the draft names, and how it was identified; nil when not
	// identified (the agent identifies the driver on site). Personal data: the draft is the
	// legal document that needs it.
	Driver *Driver `json:"driver,omitempty"`
	// MeterDistanceM is r₁, the distance from the sound-level meter to the loudspeakers the
	// receptor estimate uses, in metres, and MeterDistanceSource where it came from:
	// "registry" (the vehicle's meter_distance_m) or "profile" (noise.r1_m).
	MeterDistanceM      float64 `json:"meter_distance_m,omitempty"`
	MeterDistanceSource string  `json:"meter_distance_source,omitempty"`
}

// Registered is the registry's record of a drafted vehicle, as it stood when the draft was
// made.
type Registered struct {
	Licensee        string   `json:"licensee"`
	RazaoSocial     string   `json:"razao_social,omitempty"`
	CNPJ            string   `json:"cnpj,omitempty"`
	Address         string   `json:"address,omitempty"`
	Plate           string   `json:"plate,omitempty"`
	ManufactureYear int      `json:"manufacture_year,omitempty"`
	Devices         []Device `json:"devices,omitempty"`
}

// Device is a registered instrument of the vehicle; dates are YYYY-MM-DD, omitted when not
// known.
type Device struct {
	Kind                string `json:"kind"` // tachograph, gps, slm, bridge
	Serial              string `json:"serial"`
	Model               string `json:"model,omitempty"`
	INMETROVerification string `json:"inmetro_verification,omitempty"`
	Calibration         string `json:"calibration,omitempty"`
	ValidUntil          string `json:"valid_until,omitempty"`
}

// How a draft's driver was identified.
const (
	DriverByCard     = "card"     // the tachograph's driver card, matched in the registry
	DriverByRegistry = "registry" // the driver the registry assigns to the vehicle
)

// Driver is the driver a draft names.
type Driver struct {
	ID            string `json:"id"` // registry id
	Name          string `json:"name"`
	CNHNumber     string `json:"cnh_number,omitempty"`
	CNHCategory   string `json:"cnh_category,omitempty"`
	CNHValidUntil string `json:"cnh_valid_until,omitempty"`
	// Card is the card number as the tachograph reported it (by card only).
	Card string `json:"card,omitempty"`
	// IdentifiedBy is DriverByCard or DriverByRegistry, and Identification says it in
	// Portuguese ("cartão do tacógrafo nº …", "cadastro: condutor designado para o veículo").
	IdentifiedBy   string `json:"identified_by"`
	Identification string `json:"identification"`
}

// Fact is one episode as the draft states it.
type Fact struct {
	EpisodeID   string    `json:"episode_id"`
	Rule        string    `json:"rule"`
	Article     string    `json:"article"`
	LegalText   string    `json:"legal_text"`
	Description string    `json:"description"` // pt-BR, generated from the measured values
	Start       wire.Time `json:"start"`
	End         wire.Time `json:"end"`
	DurationS   float64   `json:"duration_s"`
	Peak        float64   `json:"peak"`
	Unit        string    `json:"unit"`
	Limit       float64   `json:"limit"`
	Tolerance   float64   `json:"tolerance,omitempty"`
	Estimate    bool      `json:"estimate,omitempty"`
	Lat         float64   `json:"lat"`
	Lon         float64   `json:"lon"`
	// Place names the position (Lat, Lon) from the municipality's street extract; nil without
	// one: the coordinates alone state the place.
	Place    *Place      `json:"place,omitempty"`
	Site     *rules.Site `json:"site,omitempty"`
	Area     string      `json:"area,omitempty"`
	Source   string      `json:"source,omitempty"`
	Closed   string      `json:"closed_reason,omitempty"`
	Evidence int         `json:"evidence_count"`
	// Detail is the episode's detail (document_expired: the document kind).
	Detail string `json:"detail,omitempty"`
	// Instrument is the registered instrument whose measurement the fact's article relies on
	// (MeasuredBy: the tachograph for speed, the sound-level meter for a level), as the
	// registry held it when the draft was made: kind, model, serial and verification. nil when
	// the fact relies on no measuring instrument, or the registry lists none of that kind.
	Instrument *Device `json:"instrument,omitempty"`
	// Document is, for document_expired, the expired document: kind, record, number and last
	// valid day.
	Document *registry.Expiry `json:"document,omitempty"`
	// Warnings are the warnings the vehicle's own driver's coach reported giving the driver
	// about this fact (Stated): evidence of the driver's knowledge, reported by the licensee's
	// device, never a ground of the auto (docs/rules.md).
	Warnings []Warning `json:"warnings,omitempty"`
}

// Bundle is the evidence frozen into a draft when it is made: the draft as made, the episodes
// with their readings, the vehicle's telemetry faults of the period, the raw batch payloads of
// the episodes ± 2 minutes verbatim (with their signatures), the geometry of the sites and
// zones used, the legal profile, and the software. Its bytes are hashed as stored: the hash is
// over exactly the bytes a verifier reads.
type Bundle struct {
	Format   int             `json:"format"`
	Draft    Draft           `json:"draft"`
	Episodes []rules.Episode `json:"episodes"`
	// Faults are the vehicle's telemetry fault episodes (FaultRules: clock_fault,
	// telemetry_conflict) that overlap the episodes ± 2 minutes or were open when the draft was
	// made, as they stood then. They are no fact of the draft (Draft.EpisodeIDs never names
	// them) but evidence against its data; the draft's warnings state them. Absent when none,
	// so that a bundle without faults is laid out as before.
	Faults  []rules.Episode   `json:"faults,omitempty"`
	Batches []RawBatch        `json:"batches"`
	Places  []json.RawMessage `json:"places,omitempty"` // GeoJSON features
	Profile ProfileRecord     `json:"profile"`
}

// BundleFormat is the version of the bundle layout.
const BundleFormat = 1

// RawBatch is one telemetry batch as the monitor received it.
type RawBatch struct {
	Vehicle    string    `json:"vehicle"`
	Epoch      string    `json:"epoch"`
	Seq        uint64    `json:"seq"`
	ReceivedAt wire.Time `json:"received_at"`
	Payload    string    `json:"payload"` // the MQTT payload, verbatim (UTF-8 JSON)
}

// ProfileRecord is the legal profile a draft was made under.
type ProfileRecord struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	YAML    string `json:"yaml"`
}

// Sealed is a draft with its bundle, the bundle's hash, the previous draft's hash and the
// monitor's signature over both: what is stored, exported and verified.
type Sealed struct {
	ID        string          `json:"id"`
	Seq       int64           `json:"seq"` // position in the chain
	Bundle    json.RawMessage `json:"bundle"`
	Hash      string          `json:"hash"`      // hex SHA-256 of Bundle's bytes
	PrevHash  string          `json:"prev_hash"` // hex, "" for the first draft
	Signature string          `json:"signature"` // hex ed25519 over SigningMessage
	PublicKey string          `json:"public_key"`
}

// SigningMessage is what the monitor signs for a draft.
func SigningMessage(id, hash, prevHash string) []byte {
	return []byte("trenzinho-draft-v1\n" + id + "\n" + hash + "\n" + prevHash + "\n")
}

// Seal hashes a bundle and signs it in the chain after prevHash.
func Seal(id string, seq int64, bundle []byte, prevHash string, key ed25519.PrivateKey) Sealed {
	sum := sha256.Sum256(bundle)
	h := hex.EncodeToString(sum[:])
	sig := ed25519.Sign(key, SigningMessage(id, h, prevHash))
	return Sealed{ID: id, Seq: seq, Bundle: bundle, Hash: h, PrevHash: prevHash,
		Signature: hex.EncodeToString(sig), PublicKey: hex.EncodeToString(key.Public().(ed25519.PublicKey))}
}

// ErrDrafted reports a draft that exists already, or an episode already in a draft: a store
// returns it so that a replay or a restart never makes a second draft.
var ErrDrafted = errors.New("already drafted")

// Integrity errors.
var (
	ErrHashMismatch = errors.New("o conteúdo do auto não confere com o hash registrado")
	ErrBadSignature = errors.New("a assinatura do monitor não confere")
	ErrWrongKey     = errors.New("assinado por outra chave que não a do monitor")
	ErrBadBundle    = errors.New("pacote de evidências ilegível")
)

// Verify checks a sealed draft: its bundle's hash, the monitor's signature over it and the
// previous hash, and — when trusted is not nil — that the signing key is the trusted one.
// It returns the decoded bundle.
func Verify(s *Sealed, trusted ed25519.PublicKey) (*Bundle, error) {
	sum := sha256.Sum256(s.Bundle)
	if hex.EncodeToString(sum[:]) != s.Hash {
		return nil, ErrHashMismatch
	}
	pub, err := hex.DecodeString(s.PublicKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, ErrBadSignature
	}
	if trusted != nil && !ed25519.PublicKey(pub).Equal(trusted) {
		return nil, ErrWrongKey
	}
	sig, err := hex.DecodeString(s.Signature)
	if err != nil || !ed25519.Verify(pub, SigningMessage(s.ID, s.Hash, s.PrevHash), sig) {
		return nil, ErrBadSignature
	}
	var b Bundle
	if err := json.Unmarshal(s.Bundle, &b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBundle, err)
	}
	if b.Draft.ID != s.ID {
		return nil, fmt.Errorf("%w: draft id %q in a bundle sealed as %q", ErrBadBundle, b.Draft.ID, s.ID)
	}
	return &b, nil
}

// VerifyBatches re-verifies the vehicles' signatures of the bundle's raw batches with their
// registered keys (by kid). It returns how many were signed and verified, and an error for the
// first that does not verify; unsigned batches are counted in unsigned.
func VerifyBatches(b *Bundle, keys map[string]ed25519.PublicKey) (verified, unsigned int, err error) {
	for _, rb := range b.Batches {
		if _, _, ok, _ := wire.SplitSignature([]byte(rb.Payload)); !ok {
			unsigned++
			continue
		}
		var head struct {
			Kid string `json:"kid"`
		}
		if err := json.Unmarshal([]byte(rb.Payload), &head); err != nil {
			return verified, unsigned, fmt.Errorf("lote %s/%d: %w", rb.Epoch, rb.Seq, err)
		}
		key, ok := keys[head.Kid]
		if !ok {
			return verified, unsigned, fmt.Errorf("lote %s/%d: chave %q desconhecida", rb.Epoch, rb.Seq, head.Kid)
		}
		if err := wire.Verify([]byte(rb.Payload), key); err != nil {
			return verified, unsigned, fmt.Errorf("lote %s/%d: %w", rb.Epoch, rb.Seq, err)
		}
		verified++
	}
	return verified, unsigned, nil
}
