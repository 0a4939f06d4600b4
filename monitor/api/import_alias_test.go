package api

import "testing"

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
}
