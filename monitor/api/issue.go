package api

import (
	"github.com/trenzinho/trenzinho/monitor/cases"
)

// IssueRefusal is the answer (409) of an issue the office refuses: a summary and every
// blocking reason at once (codes: monitor/cases, docs/api.md).
type IssueRefusal struct {
	Error   string         `json:"error"`
	Reasons []cases.Reason `json:"reasons"`
}

// office is the office of the auto (monitor/cases) the server's acts on autos run through: the
// case store as its ledger with the profile of Config.Cases; without them the drafts store,
// where the office refuses to issue (no auto without its penalty calculus).
func (s *Server) office() *cases.Office {
	o := &cases.Office{Key: s.draftKey, Now: s.casesNow}
	if l, ok := s.drafts.(cases.Ledger); ok {
		o.Ledger = l
	}
	if c := s.cases; c != nil {
		o.LicenseeAtFact, o.GroundsMissing, o.InstrumentOnFile = c.LicenseeAtFact, c.GroundsMissing, c.InstrumentOnFile
		if o.InstrumentOnFile == nil && c.Registry != nil {
			o.InstrumentOnFile = cases.RegistryInstruments(c.Registry)
		}
		if c.Registry != nil {
			o.AdhesionOnFile = cases.RegistryAdhesions(c.Registry)
		}
		if c.Store != nil && c.Profile != nil {
			o.Ledger, o.Profile = c.Store, c.Profile
		}
	}
	return o
}
