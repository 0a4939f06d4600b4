package api

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// Web Push from the dashboard (docs/api.md, "Web Push subscriptions"): a signed-in user's
// browser subscribes with the monitor's VAPID public key (GET /api/v1/me/notifications,
// "push") and hands the subscription over (POST /api/v1/me/push-subscriptions); the user lists
// and removes their devices. Only when the server sends Web Push.

// PushDirectory keeps the users' Web Push subscriptions; *notifyconfig.Directory implements it.
// The server serves the routes below when its NotifyDirectory implements it and
// VAPIDPublicKey is not empty.
type PushDirectory interface {
	// VAPIDPublicKey is the applicationServerKey (base64url); "" when Web Push is off.
	VAPIDPublicKey() string
	PushSubscriptions(ctx context.Context, user string) ([]store.PushSubscription, error)
	// AddPushSubscription checks (the sender's guard) and stores a subscription; it returns
	// the user who held its endpoint before, if another did.
	AddPushSubscription(ctx context.Context, user, subJSON, label string) (store.PushSubscription, string, error)
	DeletePushSubscription(ctx context.Context, user string, id int64) (store.PushSubscription, error)
}

// Audit actions of the subscriptions.
const (
	auditPushAdd    = "notify.push.add"
	auditPushDelete = "notify.push.delete"
	maxPushLabel    = 80
)

func (s *Server) push() PushDirectory {
	if s.notify == nil {
		return nil
	}
	p, ok := s.notify.Directory.(PushDirectory)
	if !ok || p.VAPIDPublicKey() == "" {
		return nil
	}
	return p
}

func (s *Server) pushRoutes(a *http.ServeMux) {
	if s.push() == nil {
		return
	}
	a.Handle("GET /api/v1/me/push-subscriptions", s.requireRole(store.RoleViewer, s.handlePushSubs))
	a.Handle("POST /api/v1/me/push-subscriptions", s.requireRole(store.RoleViewer, s.handleAddPushSub))
	a.Handle("DELETE /api/v1/me/push-subscriptions/{id}", s.requireRole(store.RoleViewer, s.handleDeletePushSub))
}

// pushSubJSON is a subscription as its owner sees it. The keys are never shown again.
type pushSubJSON struct {
	ID        int64     `json:"id"`
	Label     string    `json:"label"`
	Endpoint  string    `json:"endpoint"` // the page finds this browser's subscription by it
	Host      string    `json:"host"`     // the push service
	CreatedAt wire.Time `json:"created_at"`
}

func toPushSubJSON(p store.PushSubscription) pushSubJSON {
	host := ""
	if u, err := url.Parse(p.Endpoint); err == nil {
		host = u.Hostname()
	}
	return pushSubJSON{ID: p.ID, Label: p.Label, Endpoint: p.Endpoint, Host: host, CreatedAt: wire.NewTime(p.CreatedAt)}
}

// pushAnswer is the "push" of GET /api/v1/me/notifications.
type pushAnswer struct {
	PublicKey     string        `json:"public_key"`
	Subscriptions []pushSubJSON `json:"subscriptions"`
	Max           int           `json:"max"`
}

// pushInfo is the push part of the preferences' answer; nil when Web Push is off.
func (s *Server) pushInfo(ctx context.Context, user string) (*pushAnswer, error) {
	p := s.push()
	if p == nil {
		return nil, nil
	}
	subs, err := p.PushSubscriptions(ctx, user)
	if err != nil {
		return nil, err
	}
	out := &pushAnswer{PublicKey: p.VAPIDPublicKey(), Subscriptions: make([]pushSubJSON, len(subs)), Max: maxPushSubs}
	for i, sub := range subs {
		out.Subscriptions[i] = toPushSubJSON(sub)
	}
	return out, nil
}

// maxPushSubs is notifyconfig.MaxPushSubscriptions, shown to the page (the store enforces it).
const maxPushSubs = 10

func (s *Server) handlePushSubs(w http.ResponseWriter, r *http.Request) {
	info, err := s.pushInfo(r.Context(), userFrom(r.Context()).Name)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": info.Subscriptions})
}

// pushSubBody is the body of POST /api/v1/me/push-subscriptions: the browser's
// PushSubscription.toJSON() and the device's description.
type pushSubBody struct {
	Subscription struct {
		Endpoint       string   `json:"endpoint"`
		ExpirationTime *float64 `json:"expirationTime"` // ignored: the push service says when one is gone
		Keys           struct {
			P256dh string `json:"p256dh"`
			Auth   string `json:"auth"`
		} `json:"keys"`
	} `json:"subscription"`
	Label string `json:"label"`
}

// checkPushSub checks the body's form; where the endpoint may lead is the directory's guard.
func checkPushSub(in pushSubBody) (subJSON, label string, probs []fieldProblem) {
	bad := func(path, msg string) { probs = append(probs, fieldProblem{Path: path, Message: msg}) }
	sub := in.Subscription
	if len(sub.Endpoint) > webpush.MaxEndpoint {
		bad("subscription.endpoint", fmt.Sprintf("endereço longo demais (máximo %d caracteres)", webpush.MaxEndpoint))
	} else if u, err := url.Parse(sub.Endpoint); err != nil || !utf8.ValidString(sub.Endpoint) || u.Scheme != "https" || u.Host == "" || u.User != nil {
		bad("subscription.endpoint", "endereço do serviço de push inválido: deve ser https")
	}
	key := func(path, v string, size int, what string) {
		v = strings.TrimRight(v, "=")
		if len(v) > 2*size { // base64 is 4/3 of the bytes: anything longer is not the key
			bad(path, what+" inválida")
			return
		}
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil || len(b) != size {
			bad(path, fmt.Sprintf("%s inválida: esperado base64url de %d bytes", what, size))
		}
	}
	key("subscription.keys.p256dh", sub.Keys.P256dh, 65, "chave p256dh")
	key("subscription.keys.auth", sub.Keys.Auth, 16, "chave auth")
	label = strings.TrimSpace(in.Label)
	if utf8.RuneCountInString(label) > maxPushLabel || !utf8.ValidString(label) || strings.IndexFunc(label, unicode.IsControl) >= 0 {
		bad("label", fmt.Sprintf("descrição do aparelho inválida (até %d caracteres)", maxPushLabel))
	}
	if len(probs) > 0 {
		return "", "", probs
	}
	var doc webpush.Subscription
	doc.Endpoint, doc.Keys.P256dh, doc.Keys.Auth = sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth
	return string(mustJSON(doc)), label, nil
}

func (s *Server) handleAddPushSub(w http.ResponseWriter, r *http.Request) {
	var in pushSubBody
	if !s.decodeBody(w, r, &in) {
		return
	}
	subJSON, label, probs := checkPushSub(in)
	invalid := func(probs []fieldProblem) {
		s.writeJSON(w, r, http.StatusUnprocessableEntity, invalidRegistry{
			Error: fmt.Sprintf("inscrição de push inválida: %d problema(s)", len(probs)), Fields: probs})
	}
	if len(probs) > 0 {
		invalid(probs)
		return
	}
	me := userFrom(r.Context()).Name
	sub, prev, err := s.push().AddPushSubscription(r.Context(), me, subJSON, label)
	switch {
	case errors.Is(err, webpush.ErrRefusedEndpoint):
		invalid([]fieldProblem{{Path: "subscription.endpoint", Message: "serviço de push não aceito por este servidor"}})
		return
	case errors.Is(err, webpush.ErrBadSubscription):
		invalid([]fieldProblem{{Path: "subscription", Message: "inscrição de push inválida (chave p256dh fora da curva P-256?)"}})
		return
	case errors.Is(err, store.ErrTooMany):
		s.writeError(w, r, http.StatusConflict, fmt.Sprintf("você já recebe avisos em %d aparelhos: remova um antes de incluir outro", maxPushSubs))
		return
	case err != nil:
		s.fail(w, r, err, "usuário")
		return
	}
	out := toPushSubJSON(sub)
	// The audit keeps which device and which push service, never the endpoint or the keys
	// (whoever holds them can reach the device).
	entry := store.AuditEntry{User: me, Action: auditPushAdd, Object: "push:" + strconv.FormatInt(sub.ID, 10),
		After: mustJSON(map[string]any{"user": me, "label": out.Label, "host": out.Host})}
	if prev != "" {
		entry.Before = mustJSON(map[string]any{"user": prev, "host": out.Host})
	}
	s.record(r, entry)
	s.writeJSON(w, r, http.StatusCreated, out)
}

func (s *Server) handleDeletePushSub(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, http.StatusNotFound, "inscrição de push não encontrada")
		return
	}
	me := userFrom(r.Context()).Name
	sub, err := s.push().DeletePushSubscription(r.Context(), me, id)
	if err != nil {
		s.fail(w, r, err, "inscrição de push")
		return
	}
	out := toPushSubJSON(sub)
	s.record(r, store.AuditEntry{User: me, Action: auditPushDelete, Object: "push:" + strconv.FormatInt(id, 10),
		Before: mustJSON(map[string]any{"user": me, "label": out.Label, "host": out.Host})})
	w.WriteHeader(http.StatusNoContent)
}
