package drafts

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// fact states one episode in the draft, with a description in Portuguese generated from the
// measured values, and its place named from the street extract of places, if any.
//
// warnings are the vehicle's warnings of the driver's coach around the episode: those Stated
// for it are added to the fact, worded as the licensee's device's own record.
func fact(p *profile.Profile, ep *rules.Episode, places *geofences.Set, warnings []Warning) Fact {
	f := Fact{
		EpisodeID: ep.ID, Rule: ep.Rule, Article: ep.Article, LegalText: ruleOf(p, ep).Text,
		Start: ep.Start, DurationS: ep.DurationS, Peak: ep.Peak, Unit: ep.Unit, Limit: ep.Limit,
		Tolerance: ep.Tolerance, Estimate: ep.Estimate, Lat: ep.Lat, Lon: ep.Lon, Site: ep.Site,
		Source: ep.Source, Evidence: ep.Evidence, Detail: ep.Detail, Document: ep.Document,
	}
	if ep.End != nil {
		f.End = *ep.End
	}
	if ep.Area != nil {
		f.Area = *ep.Area
	}
	if ep.Closed != nil {
		f.Closed = *ep.Closed
	}
	f.Description = describe(p, ep)
	if f.Place = PlaceAt(places, f.Lat, f.Lon); f.Place != nil {
		// Observed data, approximate: the coordinates state the position.
		f.Description += " Local aproximado da posição registrada no instante do valor máximo: nas proximidades de " + f.Place.Text() + "."
	}
	for i := range warnings {
		if w := &warnings[i]; Stated(w, ep) {
			f.Warnings = append(f.Warnings, *w)
			f.Description += " " + warningText(p, w, ep)
		}
	}
	return f
}

// Num formats a number the Brazilian way: decimal comma, up to the digits given, no trailing
// zeros ("45", "37,1", "68,52").
func Num(x float64, digits int) string {
	s := strconv.FormatFloat(x, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return strings.Replace(s, ".", ",", 1)
}

// LocalTime formats a time in the profile's zone as dd/mm/aaaa hh:mm:ss.
func LocalTime(p *profile.Profile, t time.Time) string {
	return t.In(p.Location()).Format("02/01/2006 15:04:05")
}

var sources = map[string]string{
	"tacho": "pelo tacógrafo (saída de dados D8)",
	"gps":   "pelo receptor GPS",
	"slm":   "pelo decibelímetro instalado no veículo",
	"clock": "pelo horário dos registros",
}

var categories = map[string]string{
	"hospital": "hospital", "health": "estabelecimento de saúde", "school": "estabelecimento de ensino",
	"library": "biblioteca", "public_office": "repartição pública", "church": "igreja",
}

func describe(p *profile.Profile, ep *rules.Episode) string {
	var b strings.Builder
	from := LocalTime(p, ep.Start.Time)
	to := "(em andamento)"
	if ep.End != nil {
		to = LocalTime(p, ep.End.Time)
	}
	dur := Num(ep.DurationS, 1) + " s"
	src := sources[ep.Source]
	switch ep.Rule {
	case "speed":
		fmt.Fprintf(&b, "Velocidade máxima de %s km/h registrada %s, acima do limite de %s km/h acrescido da tolerância de %s km/h, mantida por %s, de %s a %s.",
			Num(ep.Peak, 2), src, Num(ep.Limit, 1), Num(ep.Tolerance, 1), dur, from, to)
	case "hours":
		start, end := p.HoursOn(ep.Start.Time) // the hours of the day it began
		fmt.Fprintf(&b, "Veículo em serviço fora do horário permitido (das %s às %s), %s min além do horário, após a tolerância de %s min para deslocamento à garagem, de %s a %s.",
			start, end, Num(ep.Peak, 0), Num(ep.Limit, 0), from, to)
	case rules.RuleSensitiveZoneSound:
		// Only what was observed: the distance in the accused's favour (distance + the margin
		// for position error), and the opening hours only when they are on file.
		fmt.Fprintf(&b, "Emissão sonora (música ou outro som do sistema de som) de %s dB(A) (L_Aeq em %s s, medido %s) a ", Num(ep.Peak, 1), Num(p.Sensitive.EmissionWindow, 0), src)
		if s := ep.Site; s != nil {
			fmt.Fprintf(&b, "no máximo %s m de %s \"%s\"", Num(max(s.MaxDistanceM, s.DistanceM), 0), categories[s.Category], s.Name)
			if s.MarginM > 0 {
				fmt.Fprintf(&b, " (distância medida de %s m acrescida de %s m de margem para o erro de posição do GPS)", Num(s.DistanceM, 1), Num(s.MarginM, 1))
			}
			if s.HoursKnown {
				fmt.Fprintf(&b, ", em horário de funcionamento (%s)", s.OpeningHours)
			}
		} else {
			b.WriteString("menos de " + Num(p.Sensitive.RadiusM, 0) + " m de local protegido")
		}
		fmt.Fprintf(&b, ", de %s a %s (%s).", from, to, dur)
	case rules.RuleBoardingSound:
		fmt.Fprintf(&b, "Emissão sonora (música ou outro som do sistema de som) de %s dB(A) (L_Aeq em %s s, medido %s) com o veículo parado",
			Num(ep.Peak, 1), Num(p.Sensitive.EmissionWindow, 0), src)
		if s := ep.Site; s != nil {
			fmt.Fprintf(&b, " por %s s no ponto de embarque \"%s\"", Num(ep.StoppedS, 0), cmp.Or(s.Name, s.ID))
			if ep.Detail == rules.BoardingDoorOpen {
				b.WriteString(", com a porta de passageiros aberta")
			}
		} else if ep.Detail == rules.BoardingDoorOpen {
			// Only the door input said boarding: the stop and the open door are what was observed.
			fmt.Fprintf(&b, " por %s s com a porta de passageiros aberta (registrada pela entrada da porta)", Num(ep.StoppedS, 0))
		}
		fmt.Fprintf(&b, ", de %s a %s (%s).", from, to, dur)
	case rules.RuleBoardingOutsidePoints:
		// Art. 36, § 4º: "… nos pontos demarcados, salvo para proteção da integridade física da
		// pessoa usuária do transporte" — the exception is the licensee's to show.
		fmt.Fprintf(&b, "Veículo em serviço parado com a porta de passageiros aberta (registrada pela entrada da porta) por até %s s fora dos pontos de embarque demarcados, %s, de %s a %s (%s). Salvo para proteção da integridade física da pessoa usuária do transporte.",
			Num(ep.Peak, 0), cmp.Or(ep.Detail, "fora de ponto de embarque demarcado"), from, to, dur)
	case rules.RuleSpeedOutOfService:
		fmt.Fprintf(&b, "Alerta operacional, não infração desta lei: veículo fora de serviço com velocidade máxima de %s km/h registrada %s, acima de %s km/h, de %s a %s (%s); o Art. 23 vale \"quando em serviço\" — fora de serviço, competência do órgão de trânsito (CTB).",
			Num(ep.Peak, 2), src, Num(ep.Limit+ep.Tolerance, 1), from, to, dur)
	case rules.RuleNoiseLimit:
		if v := ep.Verification; v != nil && v.Kind == rules.VerifyNBR10151 && v.Measurement != nil {
			describeMeasurement(&b, p, v)
			break
		}
		area := ""
		if ep.Area != nil {
			area = p.Noise.Areas[*ep.Area].Name
		}
		fmt.Fprintf(&b, "Nível sonoro ESTIMADO no receptor de %s dB(A), acima do limite de %s dB(A) (%s, período %s) acrescido da tolerância de %s dB; estimativa por propagação de fonte pontual a partir do L_Aeq em %s s medido %s — não é medição conforme a %s. De %s a %s (%s).",
			Num(ep.Peak, 1), Num(ep.Limit, 0), area, period(p, ep), Num(ep.Tolerance, 1), Num(p.Noise.WindowS, 0), src, p.Noise.Standard, from, to, dur)
	case "route_deviation":
		fmt.Fprintf(&b, "Veículo em serviço fora do itinerário autorizado para o dia e horário, a até %s m do percurso autorizado mais próximo (corredor de %s m), de %s a %s (%s).",
			Num(ep.Peak, 0), Num(ep.Limit, 0), from, to, dur)
	case "parked_public_road":
		where := "fora da garagem do licenciado"
		if s := ep.Site; s != nil && s.Kind == "public_road" {
			where = fmt.Sprintf("em via pública (%s)", cmp.Or(s.Name, s.ID))
		}
		fmt.Fprintf(&b, "Veículo estacionado %s, fora dos dias e horários da prestação do serviço, parado por %s min, de %s a %s",
			where, Num(ep.Peak, 0), from, to)
		// Only the readings observed it parked; the silence of the vehicle is no constatação.
		if obs := ep.ObservedS / 60; obs < ep.Peak-1 {
			fmt.Fprintf(&b, ", dos quais %s min constatados por leituras do veículo; o restante, sem dados do veículo, não é constatação.", Num(obs, 0))
		} else {
			b.WriteString(", constatado por leituras do veículo durante todo o período.")
		}
	case "telemetry_fault":
		what := "sem sinal"
		if ep.Detail == "contradicts_gps" {
			what = "em contradição com o GPS"
		}
		fmt.Fprintf(&b, "Saída de dados do tacógrafo %s com o veículo em movimento (até %s km/h pelo GPS), de %s a %s (%s).",
			what, Num(ep.Peak, 1), from, to, dur)
	case rules.RuleServiceSwitchSuspect:
		fmt.Fprintf(&b, "Chave de serviço desligada com o veículo %s, de %s a %s (%s).", cmp.Or(ep.Detail, "em comportamento de serviço"), from, to, dur)
	case rules.RuleDriverUnregistered:
		who := "cartão de condutor não cadastrado no órgão responsável pela licença"
		if ep.Detail == rules.DriverOtherLicensee {
			who = "cartão de condutor cadastrado para outro licenciado"
		}
		fmt.Fprintf(&b, "Veículo em serviço com %s no tacógrafo, de %s a %s (%s).", who, from, to, dur)
	case rules.RuleDriverRemoved:
		fmt.Fprintf(&b, "Veículo em serviço conduzido, pelo cartão do tacógrafo, por condutor cujo afastamento foi exigido pelo Poder Público, de %s a %s (%s).", from, to, dur)
	case rules.RuleRotationConflict:
		fmt.Fprintf(&b, "Veículo em serviço no itinerário \"%s\", atribuído pelo rodízio a outro licenciado naquele dia e horário, fora dos itinerários autorizados ao seu licenciado, de %s a %s (%s).", ep.Detail, from, to, dur)
	case rules.RuleSuspendedCirculating:
		fmt.Fprintf(&b, "Veículo em serviço durante a suspensão da atividade do licenciado (%s), de %s a %s (%s).", cmp.Or(ep.Detail, "suspensão cadastrada"), from, to, dur)
	case rules.RuleUninspectedCirculating:
		kind, date, _ := strings.Cut(ep.Detail, " ")
		what := "inspeção técnica reprovada"
		if kind == "accident" {
			what = "acidente que comprometeu a segurança do veículo"
		}
		if d, err := time.Parse(time.DateOnly, date); err == nil {
			what += " em " + d.Format("02/01/2006")
		}
		fmt.Fprintf(&b, "Veículo em serviço após %s, sem nova inspeção aprovada, de %s a %s (%s).", what, from, to, dur)
	case profile.DocumentExpiredRule:
		describeDocument(&b, ep, from, to, dur)
	default:
		fmt.Fprintf(&b, "%s: %s %s, de %s a %s.", ep.Rule, Num(ep.Peak, 2), ep.Unit, from, to)
	}
	if s := ep.Service; s != nil {
		// "Em serviço" is an element of the article: how it was established.
		b.WriteString(" " + s.Text(p.Location()))
	}
	if ep.Closed != nil && *ep.Closed == rules.ClosedInterrupted {
		b.WriteString(" Os dados do veículo foram interrompidos antes do fim do episódio.")
	}
	if v := ep.Verification; v != nil && v.Kind == rules.VerifyMusic {
		fmt.Fprintf(&b, " Verificação do agente %s em %s: música executada pelo sistema de som, audível (%s).",
			v.By, LocalTime(p, v.At.Time), v.Note)
	}
	return b.String()
}

// describeMeasurement states the agent's NBR 10151 measurement an Art. 27 auto rests on.
func describeMeasurement(b *strings.Builder, p *profile.Profile, v *rules.Verification) {
	m := v.Measurement
	corrected := ""
	if m.CorrectedDB > 0 && m.CorrectedDB != m.LAeqDB {
		corrected = ", nível corrigido pelo som residual de " + Num(m.CorrectedDB, 1) + " dB(A)"
	}
	fmt.Fprintf(b, "Medição conforme a %s realizada pelo agente %s em %s: L_Aeq de %s dB(A), nível de som residual de %s dB(A)%s, limite de %s dB(A) da norma para a área e o período; medidor %s (classe %d), calibração %s; posição de medição: %s.",
		p.Noise.Standard, v.By, LocalTime(p, m.Date.Time), Num(m.LAeqDB, 1), Num(m.ResidualDB, 1), corrected, Num(m.LimitDB, 0),
		m.Meter, m.Class, m.Calibration, m.Position)
	if v.MusicAudible != nil && *v.MusicAudible {
		b.WriteString(" Durante a medição, música executada pelo sistema de som, audível, confirmada pelo agente.")
	}
	if v.Note != "" {
		fmt.Fprintf(b, " Observação do agente: %s.", strings.TrimRight(v.Note, "."))
	}
}

func period(p *profile.Profile, ep *rules.Episode) string {
	if rules.Night(p, ep.Start.Time) {
		return "noturno"
	}
	return "diurno"
}

// warnings are what the agent must know before relying on the draft.
func warnings(p *profile.Profile, eps []rules.Episode) []string {
	var w []string
	add := func(s string) {
		for _, x := range w {
			if x == s {
				return
			}
		}
		w = append(w, s)
	}
	if !p.Law.InForce {
		add("O perfil legal aplicado indica que a lei não está em vigor.")
	}
	for _, ep := range eps {
		if ep.Unregistered {
			add("Veículo não cadastrado: titular, condutor e equipamentos não identificados pelo cadastro.")
		}
		if ep.Estimate && (ep.Verification == nil || ep.Verification.Kind != rules.VerifyNBR10151) {
			add("Valor de nível sonoro é estimativa no receptor, não medição conforme a norma.")
		}
		if ep.Closed != nil && *ep.Closed == rules.ClosedInterrupted {
			add("Episódio encerrado por interrupção dos dados do veículo.")
		}
		if ep.Rule == profile.DocumentExpiredRule {
			if n := ruleOf(p, &ep).Notice; n != "" {
				add(fmt.Sprintf("%s vencido(a) (%s): %s.", upperFirst(registry.DocumentKind(ep.Detail).Label()), ep.Article, n))
			}
		}
		if s := ep.Site; s != nil {
			if msg := placeWarning(s); msg != "" {
				add(msg)
			}
		}
	}
	return w
}

// placeNames name, for the warnings, the places whose data an episode relies on although they
// may be sample data or unverified: a boarding point (boarding_sound, boarding_outside_points)
// and a public road (parked_public_road) ground an auto whatever their source. A sensitive site
// is not here: one that is sample data or unverified never grounds an auto (rules:
// sensitive_zone_sound's grounds), so no draft relies on one and no warning is needed.
var placeNames = map[string]string{"boarding_point": "ponto de embarque", "public_road": "via pública"}

// placeWarning warns of a place of sample data, or not verified by an agent ("" when neither,
// or when the place is of a kind that never reaches a draft unverified).
func placeWarning(s *rules.Site) string {
	what, ok := placeNames[s.Kind]
	if !ok {
		return ""
	}
	name := cmp.Or(s.Name, s.ID)
	switch {
	case s.Source == "sample":
		return fmt.Sprintf("Local do fato (%s \"%s\") vem de dados de exemplo, não de levantamento: não usar para autuação.", what, name)
	case !s.Verified:
		return fmt.Sprintf("Local do fato (%s \"%s\", fonte: %s) não verificado por agente.", what, name, cmp.Or(s.Source, "não informada"))
	}
	return ""
}

// FaultRules are the rules whose episodes say that a vehicle's data is disputed: a draft of the
// vehicle over their period carries them (Bundle.Faults) and warns of them.
var FaultRules = []string{rules.ClockFaultRule, rules.TelemetryConflictRule}

// faultWarnings state the vehicle's telemetry faults of a draft's period for the review. Fault
// episodes are timed by the receive clock (the device's clock may be what is at fault).
func faultWarnings(p *profile.Profile, faults []rules.Episode) []string {
	var w []string
	for _, ep := range faults {
		when := "desde " + LocalTime(p, ep.Start.Time) + ", em andamento"
		if ep.End != nil {
			when = "de " + LocalTime(p, ep.Start.Time) + " a " + LocalTime(p, ep.End.Time)
		}
		switch ep.Rule {
		case rules.TelemetryConflictRule:
			n := int(ep.Peak)
			lots := "1 lote"
			if n != 1 {
				lots = fmt.Sprintf("%d lotes", n)
			}
			w = append(w, fmt.Sprintf("Durante o período, o equipamento do veículo enviou dados conflitantes (mesmo número de sequência com conteúdo diferente: %s, recebidos %s; episódio %s) — verificar antes de autuar.",
				lots, when, ep.ID))
		case rules.ClockFaultRule:
			w = append(w, fmt.Sprintf("Durante o período, o relógio do equipamento do veículo esteve adiantado em relação ao horário de recepção (até %s s, %s; episódio %s): os horários registrados pelo equipamento podem não ser confiáveis — verificar antes de autuar.",
				Num(ep.Peak, 0), when, ep.ID))
		}
	}
	return w
}

// ruleOf is the legal mapping of an episode: rules.<rule>, or for document_expired the
// mapping of its document kind (profile.RuleFor).
func ruleOf(p *profile.Profile, ep *rules.Episode) profile.Rule {
	r, _ := p.RuleFor(ep.Rule, ep.Detail)
	return r
}

// describeDocument states a document_expired episode: which document of which record, its
// number and last valid day, and how long the vehicle was in service with it expired.
func describeDocument(b *strings.Builder, ep *rules.Episode, from, to, dur string) {
	x := ep.Document
	if x == nil {
		fmt.Fprintf(b, "Veículo em serviço com documento vencido (%s), de %s a %s (%s).",
			registry.DocumentKind(ep.Detail).Label(), from, to, dur)
		return
	}
	if x.Problem == registry.ProblemCategory {
		fmt.Fprintf(b, "Veículo em serviço conduzido pelo %s com CNH de categoria incompatível com o veículo (%s), de %s a %s (%s).",
			x.Subject.Label(), x.Detail, from, to, dur)
		b.WriteString(" Salvo justificativa formal aprovada.")
		return
	}
	fmt.Fprintf(b, "Veículo em serviço com documento vencido: %s", x.Document.Label())
	if x.Number != "" && x.Subject.Kind != registry.SubjectDevice {
		fmt.Fprintf(b, " nº %s", x.Number)
	}
	fmt.Fprintf(b, ", do %s, válido até %s", x.Subject.Label(), x.ValidUntil.FormatBR())
	if days := int(ep.Peak); days > 0 {
		unit := "dias"
		if days == 1 {
			unit = "dia"
		}
		fmt.Fprintf(b, " (vencido havia %d %s)", days, unit)
	}
	fmt.Fprintf(b, "; em serviço de %s a %s (%s).", from, to, dur)
	// Art. 45, IV: "… nos prazos e datas estabelecidos, salvo justificativa formal aprovada".
	b.WriteString(" Salvo justificativa formal aprovada.")
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}
