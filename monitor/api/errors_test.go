package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
)

// TestFail: every error a store or the registry defines answers its status and its Portuguese
// message, wrapped or not; anything else is a 500 that says nothing of the error, which the log
// keeps.
func TestFail(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	invalid := fmt.Errorf("put: %w", errors.Join(&registry.FieldError{Record: "vehicles[PIU-001]", Field: "plate", Msg: "placa inválida"}))
	cases := []struct {
		err    error
		status int
		msg    string
	}{
		{store.ErrBadCursor, 400, "parâmetro cursor inválido"},
		{fmt.Errorf("episodes: %w", store.ErrBadCursor), 400, "parâmetro cursor inválido"},
		{store.ErrNotFound, 404, "episódio não encontrado"},
		{fmt.Errorf("draft x: %w", store.ErrNotFound), 404, "episódio não encontrado"},
		{store.ErrDecided, 409, "o auto já foi decidido"},
		{store.ErrExists, 409, "já existe um usuário com esse nome"},
		{store.ErrInvalidName, 400, "nome de usuário inválido: use de 1 a 64 letras, dígitos e . _ @ -"},
		{store.ErrInvalidRole, 400, "papel inválido: use viewer, fiscal, supervisor, autoridade ou admin (licensee só na criação, com o permissionário)"},
		{store.ErrInvalidAgent, 400, "nome completo, matrícula e cargo: até 200 caracteres cada, sem caracteres de controle"},
		{store.ErrWeakPassword, 400, fmt.Sprintf("a senha deve ter de %d a %d caracteres", store.MinPasswordLen, store.MaxPasswordLen)},
		{store.ErrLastAdmin, 409, "não é possível rebaixar ou desativar o último administrador ativo"},
		{registry.ErrNotFound, 404, "registro não encontrado no cadastro"},
		{fmt.Errorf("registry: licensee L1 has vehicles: %w", registry.ErrInUse), 409, "registro em uso: licensee L1 has vehicles: em uso"},
		{invalid, 422, "cadastro inválido: 1 problema(s)"},
		{errors.New("disk I/O error: /var/lib/secret.db"), 500, "erro interno do servidor"},
	}
	for _, c := range cases {
		logs.Reset()
		w := httptest.NewRecorder()
		s.fail(w, httptest.NewRequest("GET", "/api/v1/episodes/x", nil), c.err, "episódio")
		var body struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: answer %q: %v", c.err, w.Body, err)
		}
		if w.Code != c.status || body.Error != c.msg {
			t.Errorf("%v: %d %q, want %d %q", c.err, w.Code, body.Error, c.status, c.msg)
		}
		if logged := strings.Contains(logs.String(), c.err.Error()); logged != (c.status == http.StatusInternalServerError) {
			t.Errorf("%v: logged %v (log %q)", c.err, logged, logs.String())
		}
	}
	w := httptest.NewRecorder()
	s.fail(w, httptest.NewRequest("PUT", "/api/v1/registry/vehicles/PIU-001", nil), invalid, "registro")
	if !strings.Contains(w.Body.String(), `"path":"vehicles[PIU-001].plate"`) || !strings.Contains(w.Body.String(), "placa inválida") {
		t.Errorf("422 without the field: %s", w.Body)
	}
}
