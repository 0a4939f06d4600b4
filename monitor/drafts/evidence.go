package drafts

import (
	"fmt"
	"strings"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/wire"
)

// Values of Draft.EvidenceSigned when every batch is alike.
const (
	EvidenceAllSigned = "todas assinadas e verificadas"
	EvidenceUnsigned  = "sem assinatura"
)

// EvidenceSignatures verifies the vehicle's signature of each raw batch with the key keys
// returns for its vehicle now, and says in Portuguese what it found: EvidenceAllSigned when
// every batch verifies, EvidenceUnsigned when none is signed, otherwise the count of each kind
// ("3 de 10 lotes assinados e verificados; 7 sem assinatura"). It is "" for no batch.
//
// The monitor judges only batches its signing policy accepted, so a batch whose signature fails
// here was signed with a key the registry no longer holds (a rotated key) or could not be
// verified when it was judged (no key registered then).
func EvidenceSignatures(batches []RawBatch, keys batchsig.KeyLookup) string {
	if len(batches) == 0 {
		return ""
	}
	var verified, unsigned, noKey, failed int
	for _, rb := range batches {
		payload := []byte(rb.Payload)
		if _, _, ok, err := wire.SplitSignature(payload); !ok || err != nil {
			if err != nil {
				failed++
			} else {
				unsigned++
			}
			continue
		}
		b, err := wire.Decode(wire.TelemetryTopic(rb.Vehicle), payload, rb.ReceivedAt.Time)
		if err != nil {
			failed++
			continue
		}
		var kid string
		ok := false
		if keys != nil {
			kid, _, ok = keys(rb.Vehicle)
		}
		if !ok || kid != b.Kid {
			noKey++
			continue
		}
		if _, err := (batchsig.Policy{Required: true, Keys: keys}).Check(b, payload); err != nil {
			failed++
			continue
		}
		verified++
	}
	n := len(batches)
	switch {
	case verified == n:
		return EvidenceAllSigned
	case unsigned == n:
		return EvidenceUnsigned
	}
	var parts []string
	if verified > 0 {
		parts = append(parts, fmt.Sprintf("%d de %d lotes assinados e verificados", verified, n))
	}
	if unsigned > 0 {
		parts = append(parts, fmt.Sprintf("%d de %d sem assinatura", unsigned, n))
	}
	if noKey > 0 {
		parts = append(parts, fmt.Sprintf("%d de %d assinados com chave não cadastrada (assinatura não verificada)", noKey, n))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d de %d com assinatura inválida", failed, n))
	}
	return strings.Join(parts, "; ")
}
