package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The tests of the paper-notice import's parser; the import through the HTTP API is
// TestImportedNoticeCounts (cases_test.go).

// A paper-notice CSV may name its columns in Portuguese (with or without accents); the English
// names still work.
func TestParseImportCSVPortugueseHeader(t *testing.T) {
	rows, err := parseImportCSV([]byte("Número;Data da infração;data_emissao;CNPJ;Razão social;artigos;penalidade;situação;observação\n" +
		"PM-1/2025;2025-03-14;2025-03-15;11222333000181;Trenzinho Ltda;Art. 23; Art. 46, X;paid;papel\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows %d", len(rows))
	}
	r := rows[0]
	if r.Number != "PM-1/2025" || r.OffenceDate != "2025-03-14" || r.IssueDate != "2025-03-15" || r.LicenseeCNPJ != "11222333000181" ||
		r.LicenseeName != "Trenzinho Ltda" || r.Penalty != "Art. 46, X" || r.Status != "paid" || r.Note != "papel" {
		t.Errorf("row %+v", r)
	}
	if _, err := parseImportCSV([]byte("number,offence_date,licensee\nPM-2/2025,2025-03-14,L1\n")); err != nil {
		t.Errorf("English header: %v", err)
	}
	if _, err := parseImportCSV([]byte("numero;coluna_estranha\n1;2\n")); err == nil {
		t.Error("an unknown column was accepted")
	}
	if _, err := parseImportCSV([]byte("number;warning\nPM-3;talvez\n")); err == nil || !strings.Contains(err.Error(), "linha 2, coluna warning") {
		t.Errorf("a bad boolean: %v", err)
	}
}

// The CSV of an import is network input: any bytes give rows or an error, never a panic, and
// every value a row keeps is trimmed and not empty (an empty cell is no value).
func FuzzParseImportCSV(f *testing.F) {
	for _, s := range []string{
		"number;offence_date;issue_date;licensee;articles;penalty;status\nPM-1;2025-03-14;2025-03-15;L1;Art. 23;Art. 46, X;paid\n",
		"Número;Data da infração;CNPJ;situação;aviso;dias de suspensão\nPM-2;2025-01-02;11222333000181;notified;sim;10\n",
		"\ufeffnumber,articles\n\"PM-3\",\"Art. 23; Art. 27;\"\n",
		"number;suspension_days\nPM-4;dez\n",
		"number\n\"unterminated\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseImportCSV(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			for _, v := range append([]string{r.Number, r.OffenceDate, r.IssueDate, r.Licensee, r.LicenseeCNPJ, r.LicenseeName, r.Vehicle,
				r.Penalty, r.Status, r.NotifiedDate, r.NotifiedMode, r.PublishedDate, r.DefenceDate, r.DecisionDate, r.PaidDate,
				r.DividaAtivaDate, r.FinalDate, r.SuspensionFrom, r.Note}, r.Articles...) {
				if v != strings.TrimSpace(v) {
					t.Fatalf("untrimmed value %q", v)
				}
			}
			for _, a := range r.Articles {
				if a == "" || strings.Contains(a, ";") {
					t.Fatalf("article %q", a)
				}
			}
			if utf8.Valid(b) && !utf8.ValidString(r.Number) {
				t.Fatalf("valid input gave an invalid number %q", r.Number)
			}
		}
	})
}
