package cases

import (
	"strings"
	"testing"
)

func TestAuthorityActs(t *testing.T) {
	for _, a := range []string{"decide", "divida_ativa", "suspension", "annul", "decide_appeal"} {
		if !NeedsAuthority(a) {
			t.Errorf("%s is the authority's", a)
		}
	}
	for _, a := range []string{"notify", "defence", "pay", "issue"} {
		if NeedsAuthority(a) {
			t.Errorf("%s is not the authority's", a)
		}
	}
	if r := AuthorityRefusal("decide", "Joao", "joao"); !strings.Contains(r, "Impedimento") || !strings.Contains(r, "decidir a defesa") {
		t.Errorf("the issuer decides: %q", r)
	}
	for _, c := range [][3]string{{"decide", "chefe", "joao"}, {"notify", "joao", "joao"}, {"decide", "joao", ""}} {
		if r := AuthorityRefusal(c[0], c[1], c[2]); r != "" {
			t.Errorf("%v refused: %q", c, r)
		}
	}
	if r := AuthorityRequired("divida_ativa", "Autoridade Julgadora"); r != "Somente a Autoridade Julgadora (Art. 57) pode inscrever a multa em dívida ativa." {
		t.Errorf("%q", r)
	}
}
