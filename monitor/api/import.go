package api

// The import of earlier paper notices (POST /api/v1/notices/import): JSON or CSV rows, the
// licensee resolved in the registry, the dates checked, all stored or none (docs/api.md,
// "Importing paper notices").

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
)

// Limits of the import.
const (
	maxImportBytes = 4 << 20
	maxImportRows  = 5000
)

// importRow is one earlier paper notice as POST /api/v1/notices/import receives it (JSON, or a
// CSV row with these names as the header; articles separated by ";").
type importRow struct {
	Number          string   `json:"number"`
	OffenceDate     string   `json:"offence_date"`
	IssueDate       string   `json:"issue_date"`
	Licensee        string   `json:"licensee"`
	LicenseeCNPJ    string   `json:"licensee_cnpj"`
	LicenseeName    string   `json:"licensee_name"`
	Vehicle         string   `json:"vehicle"`
	Articles        []string `json:"articles"`
	Penalty         string   `json:"penalty"`
	Warning         bool     `json:"warning"`
	Status          string   `json:"status"`
	NotifiedDate    string   `json:"notified_date"`
	NotifiedMode    string   `json:"notified_mode"`
	PublishedDate   string   `json:"published_date"`
	RefusedToSign   bool     `json:"refused_to_sign"`
	DefenceDate     string   `json:"defence_date"`
	DecisionDate    string   `json:"decision_date"`
	PaidDate        string   `json:"paid_date"`
	DividaAtivaDate string   `json:"divida_ativa_date"`
	FinalDate       string   `json:"final_date"`
	SuspensionFrom  string   `json:"suspension_from"`
	SuspensionDays  int      `json:"suspension_days"`
	Note            string   `json:"note"`
}

// handleImportNotices serves POST /api/v1/notices/import: earlier paper notices, all or none.
func (s *Server) handleImportNotices(w http.ResponseWriter, r *http.Request) {
	rows, ok := s.readImport(w, r)
	if !ok {
		return
	}
	if len(rows) == 0 {
		s.writeError(w, r, http.StatusBadRequest, "nenhum auto para importar")
		return
	}
	if len(rows) > maxImportRows {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("no máximo %d autos por importação", maxImportRows))
		return
	}
	ns := make([]store.ImportedNotice, len(rows))
	seen := map[string]int{}
	for i, row := range rows {
		n, err := s.importNotice(row)
		if err == nil {
			if j, dup := seen[n.Number]; dup {
				err = fmt.Errorf("número repetido (também no auto %d)", j+1)
			}
			seen[n.Number] = i
		}
		if err != nil {
			what := fmt.Sprintf("auto %d", i+1)
			if num := strings.TrimSpace(row.Number); num != "" {
				what += " (" + num + ")"
			}
			s.writeError(w, r, http.StatusBadRequest, what+": "+err.Error())
			return
		}
		ns[i] = n
	}
	cs, err := s.cases.Store.ImportNotices(r.Context(), ns, s.casesNow(), actor(r))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	s.writeJSON(w, r, http.StatusCreated, newList(s.caseViews(cs), ""))
}

// readImport reads the rows of an import: CSV (text/csv) or JSON (a list, or {"notices":[…]}).
func (s *Server) readImport(w http.ResponseWriter, r *http.Request) ([]importRow, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxImportBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, "corpo da requisição grande demais")
		} else {
			s.writeError(w, r, http.StatusBadRequest, "corpo da requisição ilegível")
		}
		return nil, false
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "text/csv" {
		rows, err := parseImportCSV(body)
		if err != nil {
			s.writeError(w, r, http.StatusBadRequest, "CSV inválido: "+err.Error())
			return nil, false
		}
		return rows, true
	}
	var rows []importRow
	dec := func(v any) error {
		d := json.NewDecoder(strings.NewReader(string(body)))
		d.DisallowUnknownFields()
		if err := d.Decode(v); err != nil {
			return err
		}
		if _, err := d.Token(); err != io.EOF {
			return errors.New("trailing data")
		}
		return nil
	}
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		err = dec(&rows)
	} else {
		var wrap struct {
			Notices []importRow `json:"notices"`
		}
		err = dec(&wrap)
		rows = wrap.Notices
	}
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "corpo da requisição inválido: "+jsonProblem(err))
		return nil, false
	}
	return rows, true
}

// importAliases are the Portuguese names a CSV header may give the importRow fields (matched
// without accents, case or the difference between spaces, hyphens and underscores), besides
// their JSON names.
var importAliases = map[string]string{
	"numero": "number", "numero_do_auto": "number", "auto": "number",
	"data_fato": "offence_date", "data_do_fato": "offence_date", "data_infracao": "offence_date", "data_da_infracao": "offence_date",
	"data_emissao": "issue_date", "data_da_emissao": "issue_date",
	"permissionario": "licensee", "cnpj": "licensee_cnpj", "cnpj_permissionario": "licensee_cnpj", "razao_social": "licensee_name",
	"veiculo": "vehicle", "artigos": "articles", "penalidade": "penalty", "notificacao_preliminar": "warning",
	"situacao": "status", "data_notificacao": "notified_date", "forma_notificacao": "notified_mode",
	"data_edital": "published_date", "data_publicacao": "published_date", "recusa_assinatura": "refused_to_sign",
	"data_defesa": "defence_date", "data_decisao": "decision_date", "data_pagamento": "paid_date",
	"data_divida_ativa": "divida_ativa_date", "data_definitiva": "final_date",
	"suspensao_inicio": "suspension_from", "suspensao_dias": "suspension_days", "observacao": "note", "obs": "note",
}

var unaccent = strings.NewReplacer("á", "a", "à", "a", "â", "a", "ã", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o",
	"õ", "o", "ú", "u", "ü", "u", "ç", "c", " ", "_", "-", "_")

// headerKey is a header cell as importAliases keys it: "Data da infração" → "data_da_infracao".
func headerKey(h string) string { return unaccent.Replace(strings.ToLower(strings.TrimSpace(h))) }

// parseImportCSV reads a CSV whose header names the importRow fields (by their JSON names or
// their Portuguese aliases; comma or semicolon separated).
func parseImportCSV(b []byte) ([]importRow, error) {
	text := strings.TrimPrefix(string(b), "\ufeff")
	first, _, _ := strings.Cut(text, "\n")
	cr := csv.NewReader(strings.NewReader(text))
	if strings.Count(first, ";") > strings.Count(first, ",") {
		cr.Comma = ';'
	}
	cr.TrimLeadingSpace = true
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	header := recs[0]
	known := map[string]bool{}
	for _, f := range []string{"number", "offence_date", "issue_date", "licensee", "licensee_cnpj", "licensee_name", "vehicle",
		"articles", "penalty", "warning", "status", "notified_date", "notified_mode", "published_date", "refused_to_sign",
		"defence_date", "decision_date", "paid_date", "divida_ativa_date", "final_date", "suspension_from", "suspension_days", "note"} {
		known[f] = true
	}
	for i, h := range header {
		header[i] = strings.ToLower(strings.TrimSpace(h))
		if f, ok := importAliases[headerKey(header[i])]; ok {
			header[i] = f
		}
		if !known[header[i]] {
			return nil, fmt.Errorf("coluna desconhecida %q", h)
		}
	}
	var rows []importRow
	for li, rec := range recs[1:] {
		var row importRow
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if i >= len(header) || v == "" {
				continue
			}
			var err error
			switch header[i] {
			case "number":
				row.Number = v
			case "offence_date":
				row.OffenceDate = v
			case "issue_date":
				row.IssueDate = v
			case "licensee":
				row.Licensee = v
			case "licensee_cnpj":
				row.LicenseeCNPJ = v
			case "licensee_name":
				row.LicenseeName = v
			case "vehicle":
				row.Vehicle = v
			case "articles":
				for a := range strings.SplitSeq(v, ";") {
					if a = strings.TrimSpace(a); a != "" {
						row.Articles = append(row.Articles, a)
					}
				}
			case "penalty":
				row.Penalty = v
			case "warning":
				row.Warning, err = csvBool(v)
			case "status":
				row.Status = v
			case "notified_date":
				row.NotifiedDate = v
			case "notified_mode":
				row.NotifiedMode = v
			case "published_date":
				row.PublishedDate = v
			case "refused_to_sign":
				row.RefusedToSign, err = csvBool(v)
			case "defence_date":
				row.DefenceDate = v
			case "decision_date":
				row.DecisionDate = v
			case "paid_date":
				row.PaidDate = v
			case "divida_ativa_date":
				row.DividaAtivaDate = v
			case "final_date":
				row.FinalDate = v
			case "suspension_from":
				row.SuspensionFrom = v
			case "suspension_days":
				row.SuspensionDays, err = strconv.Atoi(v)
			case "note":
				row.Note = v
			}
			if err != nil {
				return nil, fmt.Errorf("linha %d, coluna %s: valor inválido %q", li+2, header[i], v)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func csvBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "sim", "s", "yes":
		return true, nil
	case "false", "0", "não", "nao", "n", "no":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

// importNotice validates a row and turns it into the stored record: the licensee resolved in
// the registry (it is the key of recidivism), days checked and ordered, none in the future.
func (s *Server) importNotice(row importRow) (store.ImportedNotice, error) {
	p := s.cases.Profile
	loc := p.Location()
	today := s.casesNow().In(loc).Format(time.DateOnly)
	n := store.ImportedNotice{Number: strings.TrimSpace(row.Number), Vehicle: strings.TrimSpace(row.Vehicle),
		Penalty: strings.TrimSpace(row.Penalty), Warning: row.Warning, Status: penalty.Status(strings.TrimSpace(row.Status)),
		Mode: strings.TrimSpace(row.NotifiedMode), RefusedToSign: row.RefusedToSign, LicenseeName: strings.TrimSpace(row.LicenseeName),
		Note: strings.TrimSpace(row.Note)}
	if n.Number == "" || len(n.Number) > 64 {
		return n, errors.New("número do auto (number) obrigatório, até 64 caracteres")
	}
	for _, a := range row.Articles {
		if a = strings.TrimSpace(a); a != "" {
			n.Articles = append(n.Articles, a)
		}
	}
	if len(n.Articles) == 0 {
		return n, errors.New("informe os artigos infringidos (articles)")
	}
	if n.Penalty == "" {
		return n, errors.New("informe o artigo da penalidade (penalty)")
	}
	if !slices.Contains(caseStates, n.Status) {
		return n, fmt.Errorf("situação (status) inválida %q: use issued, notified, defence_filed, defence_rejected, defence_accepted, confirmed, paid, dividaativa, dismissed ou annulled", row.Status)
	}
	if n.Mode != "" && n.Mode != penalty.ModeInPerson && n.Mode != penalty.ModeMail && n.Mode != penalty.ModeEdital {
		return n, fmt.Errorf("forma de notificação (notified_mode) inválida %q: use in_person, mail ou edital", n.Mode)
	}
	day := func(v, what string, required bool) (string, error) {
		if strings.TrimSpace(v) == "" {
			if required {
				return "", fmt.Errorf("informe a data %s", what)
			}
			return "", nil
		}
		d, ok := store.ParseDay(v, loc)
		if !ok {
			return "", fmt.Errorf("data %s inválida %q (use AAAA-MM-DD)", what, v)
		}
		if d > today {
			f, _ := time.Parse(time.DateOnly, d)
			return "", fmt.Errorf("a data %s (%s) é futura", what, f.Format("02/01/2006"))
		}
		return d, nil
	}
	var err error
	var offence, issued string
	if offence, err = day(row.OffenceDate, "da infração (offence_date)", true); err != nil {
		return n, err
	}
	if issued, err = day(row.IssueDate, "de emissão (issue_date)", true); err != nil {
		return n, err
	}
	fields := []struct {
		v    string
		dst  *string
		what string
	}{
		{row.NotifiedDate, &n.Notified, "da notificação (notified_date)"}, {row.PublishedDate, &n.Published, "de publicação do edital (published_date)"},
		{row.DefenceDate, &n.DefenceFiled, "da defesa (defence_date)"}, {row.DecisionDate, &n.Decided, "da decisão (decision_date)"},
		{row.PaidDate, &n.Paid, "do pagamento (paid_date)"}, {row.DividaAtivaDate, &n.DividaAtiva, "da inscrição em dívida ativa (divida_ativa_date)"},
		{row.FinalDate, &n.Final, "em que a multa se tornou definitiva (final_date)"},
	}
	for _, f := range fields {
		if *f.dst, err = day(f.v, f.what, false); err != nil {
			return n, err
		}
	}
	order := []struct{ a, b, what string }{
		{offence, issued, "a emissão é anterior à infração"},
		{issued, n.Notified, "a notificação é anterior à emissão"},
		{issued, n.Published, "a publicação do edital é anterior à emissão"},
		{n.Notified, n.DefenceFiled, "a defesa é anterior à notificação"},
		{n.DefenceFiled, n.Decided, "a decisão é anterior à defesa"},
		{issued, n.Paid, "o pagamento é anterior à emissão"},
		{issued, n.DividaAtiva, "a inscrição em dívida ativa é anterior à emissão"},
	}
	for _, o := range order {
		if o.a != "" && o.b != "" && o.b < o.a {
			return n, errors.New(o.what)
		}
	}
	if err := importPrescription(p, &n, offence, issued); err != nil {
		return n, err
	}
	if n.Mode == penalty.ModeEdital && n.Published == "" {
		return n, errors.New("notificação por edital sem a data de publicação (published_date)")
	}
	if n.RefusedToSign && n.Mode != penalty.ModeInPerson {
		return n, errors.New("a recusa em assinar (refused_to_sign) só se registra na entrega em mãos")
	}
	if row.SuspensionFrom != "" || row.SuspensionDays != 0 {
		from, err := day(row.SuspensionFrom, "de início da suspensão (suspension_from)", true)
		if err != nil {
			return n, err
		}
		if row.SuspensionDays <= 0 {
			return n, errors.New("informe os dias de suspensão (suspension_days)")
		}
		f, _ := time.Parse(time.DateOnly, from)
		n.Suspension = &store.AppliedSuspension{From: from, Days: row.SuspensionDays,
			To: f.AddDate(0, 0, row.SuspensionDays-1).Format(time.DateOnly)}
	}
	// The licensee is the key of recidivism: it must be the registry's.
	switch {
	case strings.TrimSpace(row.Licensee) != "" || strings.TrimSpace(row.LicenseeCNPJ) != "":
		key := strings.TrimSpace(row.Licensee)
		if key == "" {
			cnpj, err := registry.ParseCNPJ(row.LicenseeCNPJ)
			if err != nil {
				return n, err
			}
			key = cnpj
		}
		if s.cases.Registry == nil {
			if strings.TrimSpace(row.Licensee) == "" {
				return n, errors.New("sem cadastro de licenciados no monitor, informe o licenciado pelo seu id (licensee)")
			}
			n.Licensee = key
			break
		}
		l, ok := s.licensee(key)
		if !ok {
			return n, fmt.Errorf("licenciado %s não encontrado no cadastro: sem ele o auto não contaria para a reincidência", key)
		}
		n.Licensee, n.LicenseeCNPJ = l.ID, l.CNPJ
		if n.LicenseeName == "" {
			n.LicenseeName = l.RazaoSocial
		}
	default:
		return n, errors.New("informe o licenciado (licensee ou licensee_cnpj)")
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(row.OffenceDate)); err == nil {
		n.Offence = t.UTC().Truncate(time.Millisecond)
	} else {
		d, _ := time.Parse(time.DateOnly, offence)
		n.Offence = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).UTC()
	}
	d, _ := time.Parse(time.DateOnly, issued)
	n.Issued = time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, loc).UTC()
	return n, nil
}
