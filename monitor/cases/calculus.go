package cases

import (
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The penalty calculus at issue (Art. 44, 48, 52, 53): the offence of a draft or of a manual
// notice, assessed over every earlier notice of its licensee as it stands (penalty.Assess).

// assessOptions are the options of the penalty calculus the profile holds: the repeat fines of
// its warning-first rules (rules.<id>.repeat).
func assessOptions(p *profile.Profile) penalty.Options {
	opt := penalty.Options{Repeat: map[string]penalty.RepeatFine{}}
	for id, r := range p.Rules {
		if r.Repeat != nil {
			opt.Repeat[id] = penalty.RepeatFine{Penalty: r.Repeat.Penalty, UFMP: r.Repeat.Fine}
		}
	}
	return opt
}

// withRules returns a copy of p whose rules also hold extra; p itself is not changed.
func withRules(p *profile.Profile, extra map[string]profile.Rule) *profile.Profile {
	if len(extra) == 0 {
		return p
	}
	cp := *p
	cp.Rules = make(map[string]profile.Rule, len(p.Rules)+len(extra))
	for id, r := range p.Rules {
		cp.Rules[id] = r
	}
	for id, r := range extra {
		cp.Rules[id] = r
	}
	return &cp
}

// draftOffence is the offence of a draft for the calculus. A rule the profile maps under
// rules.<id> is assessed by that mapping; a rule whose mapping depends on its facts (e.g.
// document_expired, by document kind) is assessed by the legal mapping the draft recorded for
// each fact (its article, the draft's penalty and fine).
func draftOffence(p *profile.Profile, d *drafts.Draft, issue time.Time) (*profile.Profile, penalty.Offence) {
	o := penalty.Offence{Licensee: d.Licensee, Date: d.Start.Time, Issue: issue}
	extra := map[string]profile.Rule{}
	for _, id := range d.Rules {
		if r, ok := p.Rules[id]; ok && r.Infraction {
			o.Rules = append(o.Rules, id)
			continue
		}
		var arts, texts []string // in the order of the facts
		for _, f := range d.Facts {
			if f.Rule == id && f.Article != "" && !slices.Contains(arts, f.Article) {
				arts, texts = append(arts, f.Article), append(texts, f.LegalText)
			}
		}
		if len(arts) == 0 && len(d.Articles) > 0 {
			arts, texts = d.Articles[:1], []string{""}
		}
		for i, art := range arts {
			key := id + ":" + art
			extra[key] = profile.Rule{Article: art, Penalty: d.Penalty, Text: texts[i], FineUFMP: d.FineUFMP, Infraction: true}
			o.Rules = append(o.Rules, key)
		}
	}
	return withRules(p, extra), o
}

// manualOffence is the offence of a manual notice for the calculus: its infractions
// (manual_infractions.<id>) assessed as rules.
func manualOffence(p *profile.Profile, m *ManualNotice, issue time.Time) (*profile.Profile, penalty.Offence, error) {
	if len(m.Infractions) == 0 {
		return nil, penalty.Offence{}, invalidf("informe ao menos uma infração (infractions) do perfil legal.")
	}
	extra := map[string]profile.Rule{}
	for _, id := range m.Infractions {
		mi, ok := p.ManualInfractions[id]
		if !ok {
			return nil, penalty.Offence{}, invalidf("infração %q não consta do perfil legal (manual_infractions).", id)
		}
		extra[id] = profile.Rule{Article: mi.Article, Penalty: mi.Penalty, Text: mi.Text, FineUFMP: mi.Fine, Infraction: true, Notice: mi.Notice}
	}
	return withRules(p, extra), penalty.Offence{Rules: m.Infractions, Licensee: m.Licensee, Date: m.Offence, Issue: issue}, nil
}

// assess runs the penalty calculus; its failure is a conflict the agent reads.
func assess(p *profile.Profile, o penalty.Offence, hist []penalty.Notice, opt penalty.Options) (*penalty.Result, error) {
	res, err := penalty.Assess(p, o, hist, opt)
	if err != nil {
		return nil, conflictf("não foi possível calcular a penalidade na emissão (verifique o perfil legal): %v", err)
	}
	return &res, nil
}
