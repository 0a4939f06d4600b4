package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Limits of a status message.
const (
	MaxStatusBytes = 64 << 10
	MaxDevices     = 16
	maxStatusText  = 64
)

// DecodeStatus parses and bounds a status message (docs/protocol.md §7). It does not verify
// the signature: see batchsig.Policy.CheckStatus.
func DecodeStatus(payload []byte) (*Status, error) {
	if len(payload) > MaxStatusBytes {
		return nil, reject(ReasonTooLarge, "%d bytes, limit %d", len(payload), MaxStatusBytes)
	}
	if !utf8.Valid(payload) {
		return nil, reject(ReasonNotUTF8, "payload is not valid UTF-8")
	}
	if p := bytes.TrimLeft(payload, " \t\r\n"); len(p) == 0 || p[0] != '{' {
		return nil, reject(ReasonBadJSON, "payload is not a JSON object")
	}
	var s Status
	if err := json.Unmarshal(payload, &s); err != nil {
		return nil, jsonError(err)
	}
	if _, _, ok, err := SplitSignature(payload); err != nil {
		return nil, err
	} else if s.Sig != "" && !ok {
		return nil, reject(ReasonBadSignature, "sig must be the last member")
	}
	switch {
	case len(s.Version) > maxStatusText:
		return nil, reject(ReasonBadValue, "version longer than %d", maxStatusText)
	case s.Epoch != "" && !validEpoch(s.Epoch):
		return nil, reject(ReasonMissingEpoch, "epoch %q", s.Epoch)
	case s.Seq > MaxSeq:
		return nil, reject(ReasonBadSeq, "seq %d above 2^63-1", s.Seq)
	case s.ConfigVersion > MaxSeq:
		return nil, reject(ReasonBadValue, "config_version %d above 2^63-1", s.ConfigVersion)
	case s.SpoolDepth != nil && *s.SpoolDepth < 0, s.SpoolEvicted != nil && *s.SpoolEvicted < 0:
		return nil, reject(ReasonBadValue, "negative spool count")
	case len(s.Devices) > MaxDevices:
		return nil, reject(ReasonBadValue, "%d devices, limit %d", len(s.Devices), MaxDevices)
	case len(s.Kid) > MaxKidLen:
		return nil, reject(ReasonBadSignature, "kid longer than %d", MaxKidLen)
	case s.Sig != "" && s.Kid == "":
		return nil, reject(ReasonBadSignature, "sig without kid")
	}
	for k, v := range s.Devices {
		if len(k) > maxStatusText || len(v) > maxStatusText {
			return nil, reject(ReasonBadValue, "device name or state longer than %d", maxStatusText)
		}
	}
	return &s, nil
}
