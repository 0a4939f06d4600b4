// Package batchsig applies the signing policy of the wire protocol (docs/protocol.md §6) to a
// decoded telemetry batch: it verifies a signed batch against the key the registry holds for its
// vehicle and decides, with the legal profile's "signatures required" setting, whether the batch
// is accepted. Ingest and the monitor share it, so that both programs accept and refuse exactly
// the same batches.
//
// The policy:
//
//	                                   required            not required
//	unsigned                           unsigned            accepted (Unsigned)
//	signed, vehicle has no key         unknown_key         accepted, not verified (Unverified)
//	signed, kid is not the vehicle's   unknown_key         accepted, not verified (Unverified)
//	signed, signature does not verify  signature_failed    signature_failed
//	signed and verified                accepted (Verified) accepted (Verified)
//
// A signature that does not verify is never accepted: a forged or tampered batch is worse than
// an unsigned one. A batch signed with another key than the registered one (a Pi still signing
// with the key replaced by `monitor vehicle add --rotate`) cannot be checked; when signatures
// are not required it is accepted as not verified, like an unsigned one would be, instead of
// being lost to the rules until the Pi is reconfigured. A batch whose "sig" member is malformed is already refused by wire.Decode
// (bad_signature).
package batchsig

import (
	"crypto/ed25519"
	"fmt"

	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// KeyLookup returns the key registered for a vehicle: its name (kid) and the ed25519 public key.
// ok is false when the vehicle has no key (or is not registered).
type KeyLookup func(vehicle string) (kid string, pub ed25519.PublicKey, ok bool)

// Outcome says how an accepted batch was accepted.
type Outcome int

// Outcomes of an accepted batch.
const (
	Unsigned   Outcome = iota // no signature; signatures are not required
	Verified                  // signed and verified with the vehicle's registered key
	Unverified                // signed, but the vehicle has no registered key; signatures are not required
)

func (o Outcome) String() string {
	switch o {
	case Verified:
		return "verified"
	case Unverified:
		return "unverified"
	}
	return "unsigned"
}

// Outcomes lists the outcomes, for metrics.
var Outcomes = []Outcome{Unsigned, Verified, Unverified}

// Policy is the signing policy. Its zero value requires nothing and knows no key: every
// well-formed batch is accepted.
type Policy struct {
	// Required refuses unsigned batches and batches of vehicles without a registered key.
	Required bool
	// Keys finds a vehicle's registered key; nil: no vehicle has one.
	Keys KeyLookup
}

// Check applies the policy to a batch that wire.Decode accepted; payload is the batch exactly as
// received. It returns how the batch was accepted, or a *wire.Error whose reason
// (wire.ReasonUnsigned, wire.ReasonUnknownKey, wire.ReasonSignatureFailed) says why it is not.
func (p Policy) Check(b *wire.Batch, payload []byte) (Outcome, error) {
	return p.check(b.Vehicle, b.Kid, payload)
}

// CheckStatus applies the policy to a status message of vehicle (payload exactly as received),
// as Check does to a batch. The caller accepts the MQTT will ({"online":false}, which the broker
// publishes unsigned) without it, and lets it only mark the vehicle offline.
func (p Policy) CheckStatus(vehicle string, s *wire.Status, payload []byte) (Outcome, error) {
	return p.check(vehicle, s.Kid, payload)
}

func (p Policy) check(vehicle, batchKid string, payload []byte) (Outcome, error) {
	_, _, signed, err := wire.SplitSignature(payload)
	if err != nil {
		return 0, err // bad_signature: Decode refuses it first
	}
	if !signed {
		if p.Required {
			return 0, &wire.Error{Reason: wire.ReasonUnsigned, Detail: "signatures are required and the batch has no sig"}
		}
		return Unsigned, nil
	}
	var (
		kid string
		pub ed25519.PublicKey
		ok  bool
	)
	if p.Keys != nil {
		kid, pub, ok = p.Keys(vehicle)
	}
	if !ok {
		if p.Required {
			return 0, &wire.Error{Reason: wire.ReasonUnknownKey,
				Detail: fmt.Sprintf("vehicle %s has no registered key (kid %q)", vehicle, batchKid)}
		}
		return Unverified, nil
	}
	if batchKid != kid {
		if !p.Required {
			return Unverified, nil
		}
		return 0, &wire.Error{Reason: wire.ReasonUnknownKey,
			Detail: fmt.Sprintf("kid %q is not the registered key %q of vehicle %s", batchKid, kid, vehicle)}
	}
	if err := wire.Verify(payload, pub); err != nil {
		return 0, err
	}
	return Verified, nil
}

// RegistryKeys looks keys up in a registry store (which may be reloaded meanwhile). A nil store
// knows no key.
func RegistryKeys(s *registry.Store) KeyLookup {
	if s == nil {
		return nil
	}
	return func(vehicle string) (string, ed25519.PublicKey, bool) {
		v, ok := s.Vehicle(vehicle)
		if !ok || v.KeyID == "" {
			return "", nil, false
		}
		pub, err := v.Ed25519Key()
		if err != nil || pub == nil {
			return "", nil, false // validation refuses such a registry; never reached
		}
		return v.KeyID, pub, true
	}
}
