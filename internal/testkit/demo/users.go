package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Password is the password of every demonstration user (Users).
const Password = "trenzinho-demo"

// User is an account of the demonstration, one for each role the process of an auto needs.
type User struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// Licensee is the registry id a licensee's user acts for (role licensee).
	Licensee  string `json:"licensee,omitempty"`
	FullName  string `json:"full_name,omitempty"`
	Matricula string `json:"matricula,omitempty"`
	Cargo     string `json:"cargo,omitempty"`
	// What says in Portuguese what the user does in the demonstration (README).
	What string `json:"-"`
}

// Users are the demonstration's accounts besides the first admin: an inspector who issues the
// autos, a supervisor, the competent authority who decides the defences (never the one who
// issued the auto), the superior authority who decides the appeals (appeal.decided_by: another
// holder of the role autoridade; never admin), and the representative of the licensee L1 (PIU-001, PIU-002) in the
// licensee's portal, where the demonstration profile enables the electronic notice. Their
// identification is fictitious and says so.
func Users() []User {
	const m = " (" + Label + ")"
	return []User{
		{Name: "fiscal", Role: "fiscal", FullName: "Fernanda Souza", Matricula: "DEMO-0001", Cargo: "Fiscal de Posturas" + m,
			What: "revisa e emite os autos, notifica"},
		{Name: "supervisor", Role: "supervisor", FullName: "Sérgio Lima", Matricula: "DEMO-0002", Cargo: "Supervisor de Fiscalização" + m,
			What: "cadastro, geocercas e o trabalho dos fiscais"},
		{Name: "autoridade", Role: "autoridade", FullName: "Aurora Reis", Matricula: "DEMO-0003", Cargo: "Autoridade Julgadora de Posturas" + m,
			What: "decide defesas"},
		{Name: "superior", Role: "autoridade", FullName: "Sofia Prado", Matricula: "DEMO-0004", Cargo: "Secretária Municipal de Posturas, autoridade superior" + m,
			What: "decide recursos (autoridade superior, Lei nº 9.784/1999, art. 56, § 1º)"},
		{Name: "alegria", Role: "licensee", Licensee: "L1",
			What: "representante de Trenzinho Alegria da Orla Ltda (L1: PIU-001, PIU-002) no portal do permissionário"},
	}
}

// EnsureUsers creates, through the monitor's API at base with an admin's bearer token, every
// demonstration user that does not exist yet, with Password. A user that exists is left as it
// is (its password may have been changed on purpose).
func EnsureUsers(ctx context.Context, c *http.Client, base, token string) error {
	var have struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := call(ctx, c, http.MethodGet, base+"/api/v1/users", token, nil, &have); err != nil {
		return fmt.Errorf("demo users: %w", err)
	}
	exists := map[string]bool{}
	for _, u := range have.Items {
		exists[u.Name] = true
	}
	for _, u := range Users() {
		if exists[u.Name] {
			continue
		}
		req := struct {
			User
			Password string `json:"password"`
		}{u, Password}
		if err := call(ctx, c, http.MethodPost, base+"/api/v1/users", token, req, nil); err != nil {
			return fmt.Errorf("demo users: create %s: %w", u.Name, err)
		}
	}
	return nil
}

func call(ctx context.Context, c *http.Client, method, url, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
