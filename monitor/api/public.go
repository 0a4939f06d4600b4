package api

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// PublicStore keeps the public verification codes of issued autos (*store.DB).
type PublicStore interface {
	// PublicCode returns the code of an issued auto, assigning it on first call.
	PublicCode(ctx context.Context, draftID string) (string, error)
	// DraftByPublicCode returns the issued auto of a code, or store.ErrNotFound.
	DraftByPublicCode(ctx context.Context, code string) (*store.DraftRecord, error)
	// IsPublicPDF reports whether the monitor rendered a PDF of the auto with this SHA-256.
	IsPublicPDF(ctx context.Context, draftID, sha256hex string) (bool, error)
}

// PublicConfig serves the public verification page of issued autos, GET and POST /v/{code}:
// no login, rate-limited per client address.
type PublicConfig struct {
	Store PublicStore
	// Location is the time zone of the dates the page shows (the profile's). Default UTC.
	Location *time.Location
	// Requests and Window bound the page's requests per client address: after Requests in a
	// Window (which starts at the address's first request), the address is refused (429) until
	// the window ends. Default 60 in 15 min.
	Requests int
	Window   time.Duration
	// MaxUpload bounds an uploaded file (POST). Default 20 MiB.
	MaxUpload int64
}

// Public page defaults and bounds.
const (
	defaultPublicRequests = 60
	defaultPublicWindow   = 15 * time.Minute
	defaultMaxUpload      = 20 << 20
	// publicAddresses bounds the client addresses the page's limiter remembers; past it the
	// address whose window started first is forgotten (a flood from many addresses costs at
	// most this much memory, and each address still gets at most Requests per window).
	publicAddresses = 10_000
	// publicUploads bounds the uploads hashed at once.
	publicUploads = 4
)

// publicRoutes registers the public page on root when configured.
func (s *Server) publicRoutes(root *http.ServeMux) {
	if s.public == nil || s.public.Store == nil || s.drafts == nil {
		s.public = nil
		return
	}
	cp := *s.public // the defaults below are the server's, not the caller's
	p := &cp
	s.public = p
	if p.Location == nil {
		p.Location = time.UTC
	}
	if p.Requests <= 0 {
		p.Requests = defaultPublicRequests
	}
	if p.Window <= 0 {
		p.Window = defaultPublicWindow
	}
	if p.MaxUpload <= 0 {
		p.MaxUpload = defaultMaxUpload
	}
	s.publicLimit = newThrottle(p.Requests, p.Window, time.Now)
	s.publicLimit.maxKeys = publicAddresses
	s.publicUploads = make(chan struct{}, publicUploads)
	root.HandleFunc("GET /v/{code}", s.handlePublic)
	root.HandleFunc("POST /v/{code}", s.handlePublic)
}

// KeyFingerprint is drafts.KeyFingerprint: the fingerprint of the monitor's public key.
func KeyFingerprint(pub ed25519.PublicKey) string { return drafts.KeyFingerprint(pub) }

// publicPage is what the public page shows. It holds no personal data — no licensee, driver,
// agent, plate or vehicle, no place or position: only what identifies the auto to someone who
// holds it and what proves its integrity.
type publicPage struct {
	Found       bool
	Notice      string
	IssuedAt    string
	FactsDate   string
	Articles    []string
	Penalty     string
	SealOK      bool
	SealProblem string
	CheckedAt   string
	Hash        string
	Seq         int64
	PublicKey   string
	Fingerprint string
	KeyIsOurs   bool
	Upload      *uploadResult
	Message     string // a refusal (429, 413…)
	// Demonstration is notice.DemonstrationLabel for an auto made, or shown, under a
	// demonstration profile (`make run`'s), as its PDF says on every page; "" otherwise.
	Demonstration string
}

type uploadResult struct {
	Match bool
	What  string
}

// handlePublic serves GET and POST /v/{code}.
func (s *Server) handlePublic(w http.ResponseWriter, r *http.Request) {
	ip := remoteIP(r)
	left, ok := s.publicLimit.admit(ip)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((left+time.Second-1)/time.Second)))
		s.publicAnswer(w, http.StatusTooManyRequests, &publicPage{Message: "Muitas consultas deste endereço. Tente novamente mais tarde."})
		return
	}
	s.publicLimit.done(ip, true) // every request counts against the address
	// An upload is read (bounded) before anything else, so that an oversized one is refused
	// as such whatever the code.
	var file []byte
	if r.Method == http.MethodPost {
		select {
		case s.publicUploads <- struct{}{}:
			defer func() { <-s.publicUploads }()
		case <-r.Context().Done():
			return
		}
		var status int
		var msg string
		if file, status, msg = s.readUpload(w, r); status != 0 {
			s.publicAnswer(w, status, &publicPage{Message: msg})
			return
		}
	}
	code := r.PathValue("code")
	var d *store.DraftRecord
	var err error
	if store.ValidPublicCode(code) {
		d, err = s.public.Store.DraftByPublicCode(r.Context(), code)
	} else {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		s.publicAnswer(w, http.StatusNotFound, &publicPage{Message: "Código de verificação não encontrado."})
		return
	}
	if err != nil {
		s.log.Error("public page", "err", err)
		s.publicAnswer(w, http.StatusInternalServerError, &publicPage{Message: "Erro interno do servidor."})
		return
	}
	page := s.publicOf(r.Context(), d)
	status := http.StatusOK
	if file != nil {
		up, err := s.checkUpload(r.Context(), file, d)
		if err != nil {
			s.log.Error("public page: upload", "err", err)
			s.publicAnswer(w, http.StatusInternalServerError, &publicPage{Message: "Erro interno do servidor."})
			return
		}
		page.Upload = up
	}
	s.publicAnswer(w, status, page)
}

// publicOf is the page of an issued auto, its seal checked now.
func (s *Server) publicOf(ctx context.Context, d *store.DraftRecord) *publicPage {
	loc := s.public.Location
	p := &publicPage{Found: true, Notice: d.Notice, Articles: d.Doc.Articles, Penalty: d.Doc.Penalty,
		Hash: d.Sealed.Hash, Seq: d.Sealed.Seq, CheckedAt: s.now().In(loc).Format("02/01/2006 15:04:05 (MST)")}
	if d.DecidedAt != nil {
		p.IssuedAt = d.DecidedAt.In(loc).Format("02/01/2006")
	}
	if !d.Doc.Start.IsZero() {
		p.FactsDate = d.Doc.Start.In(loc).Format("02/01/2006")
		if e := d.Doc.End; !e.IsZero() && e.In(loc).Format("02/01/2006") != p.FactsDate {
			p.FactsDate += " a " + e.In(loc).Format("02/01/2006")
		}
	}
	if s.draftKey != nil {
		p.PublicKey = hex.EncodeToString(s.draftKey)
		p.Fingerprint = KeyFingerprint(s.draftKey)
		p.KeyIsOurs = d.Sealed.PublicKey == p.PublicKey
	}
	p.SealOK, p.SealProblem = s.publicSeal(ctx, d)
	if notice.IsDemonstration(d.Doc.ProfileVer) || s.mapCfg.Profile != nil && notice.IsDemonstration(s.mapCfg.Profile.Version) {
		p.Demonstration = notice.DemonstrationLabel
	}
	return p
}

// publicSeal checks the auto's seal now — the bundle's hash, the monitor's signature, the
// chain and the row against the bundle (Server.verify) — and says what failed in fixed words
// (an error's own text could quote the data).
func (s *Server) publicSeal(ctx context.Context, d *store.DraftRecord) (bool, string) {
	v := s.verify(ctx, d)
	if v == "ok" {
		return true, ""
	}
	_, err := drafts.Verify(&d.Sealed, s.draftKey)
	switch {
	case err == nil:
		return false, v // the chain or the row: Server.verify's own fixed messages
	case errors.Is(err, drafts.ErrHashMismatch), errors.Is(err, drafts.ErrBadSignature), errors.Is(err, drafts.ErrWrongKey):
		return false, err.Error()
	case errors.Is(err, drafts.ErrBadBundle):
		return false, drafts.ErrBadBundle.Error()
	}
	return false, "o selo não confere"
}

// readUpload reads the uploaded file of a POST: the multipart field "arquivo" (the page's
// form), or the raw body. It returns the file, or the status and message of a refusal.
func (s *Server) readUpload(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	limit := s.public.MaxUpload
	if r.ContentLength > limit+64<<10 {
		return nil, http.StatusRequestEntityTooLarge, "Arquivo grande demais."
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+64<<10) // room for the multipart framing
	tooBig := func(err error) bool {
		var mb *http.MaxBytesError
		return errors.As(err, &mb)
	}
	var body io.Reader = r.Body
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, http.StatusBadRequest, "Envio inválido."
		}
		for {
			part, err := mr.NextPart()
			if err != nil {
				if tooBig(err) {
					return nil, http.StatusRequestEntityTooLarge, "Arquivo grande demais."
				}
				return nil, http.StatusBadRequest, "Envie um arquivo no campo \"arquivo\"."
			}
			if part.FormName() == "arquivo" {
				body = part
				break
			}
		}
	}
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if tooBig(err) || int64(len(b)) > limit {
		return nil, http.StatusRequestEntityTooLarge, "Arquivo grande demais."
	}
	if err != nil || len(b) == 0 {
		return nil, http.StatusBadRequest, "Envie um arquivo no campo \"arquivo\"."
	}
	return b, 0, ""
}

// checkUpload answers "confere com o registro?" for an uploaded file: it matches when it is
// the auto's sealed evidence bundle (its SHA-256 is the registered hash), the auto's export
// (GET /api/v1/drafts/{id}/export: same id, hash and signature, and the signature verifies
// with the monitor's key), or a PDF of the auto that the monitor rendered (its SHA-256 was
// recorded then).
func (s *Server) checkUpload(ctx context.Context, b []byte, d *store.DraftRecord) (*uploadResult, error) {
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	if h == d.Sealed.Hash {
		return &uploadResult{Match: true, What: "É o pacote de evidências selado deste auto: o hash SHA-256 do arquivo é o registrado."}, nil
	}
	if bytes.HasPrefix(b, []byte("%PDF-")) {
		ok, err := s.public.Store.IsPublicPDF(ctx, d.Sealed.ID, h)
		if err != nil {
			return nil, err
		}
		if ok {
			return &uploadResult{Match: true, What: "É um PDF deste auto emitido pelo monitor: o hash SHA-256 do arquivo é o de um PDF registrado."}, nil
		}
		return &uploadResult{What: "Este PDF não é nenhum dos emitidos pelo monitor para este auto (o hash SHA-256 " + h + " não está registrado)."}, nil
	}
	var up drafts.Sealed
	if json.Unmarshal(b, &up) == nil && up.ID != "" {
		if up.ID == d.Sealed.ID && up.Hash == d.Sealed.Hash && up.Signature == d.Sealed.Signature {
			if _, err := drafts.Verify(&up, s.draftKey); err == nil {
				return &uploadResult{Match: true, What: "É a exportação deste auto: o hash do pacote e a assinatura do monitor conferem com o registro."}, nil
			}
		}
		return &uploadResult{What: "Esta exportação não confere com o registro deste auto."}, nil
	}
	return &uploadResult{What: "O arquivo não confere com o registro deste auto (hash SHA-256 " + h + ")."}, nil
}

// publicAnswer writes the page.
func (s *Server) publicAnswer(w http.ResponseWriter, status int, p *publicPage) {
	var buf bytes.Buffer
	if err := publicTemplate.Execute(&buf, p); err != nil {
		s.log.Error("public page", "err", err)
		http.Error(w, "erro interno do servidor", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src '"+publicStyleHash+"'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

const publicStyle = `body{font-family:system-ui,sans-serif;max-width:44rem;margin:1rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.3rem}dt{font-weight:600;margin-top:.6rem}dd{margin:0}code{word-break:break-all;font-size:.85rem}
.ok{background:#e6f4ea;border:2px solid #1e7b34;padding:.8rem}.bad{background:#fdecea;border:2px solid #b3261e;padding:.8rem}
form{margin-top:1.5rem;border-top:1px solid #ccc;padding-top:1rem}small{color:#555}`

var publicStyleHash = func() string {
	sum := sha256.Sum256([]byte(publicStyle))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

var publicTemplate = template.Must(template.New("public").Parse(`<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>Verificação pública de auto de infração</title><style>` + publicStyle + `</style></head><body>
<h1>Verificação pública de auto de infração</h1>
{{if .Demonstration}}<p class="bad" id="demonstration"><strong>{{.Demonstration}}</strong> — perfil legal de demonstração, sem valor legal: este auto não vale.</p>{{end}}
{{if .Message}}<p class="bad">{{.Message}}</p>{{end}}
{{if .Found}}
{{if .SealOK}}<p class="ok"><strong>Selo íntegro.</strong> O hash SHA-256 do pacote de evidências, o encadeamento com o auto anterior e a assinatura Ed25519 do monitor conferem. Verificação refeita agora, em {{.CheckedAt}}.</p>
{{else}}<p class="bad"><strong>Selo violado.</strong> A prova deste auto não confere com o selo: {{.SealProblem}}. Verificação refeita agora, em {{.CheckedAt}}.</p>{{end}}
<dl>
<dt>Auto de infração</dt><dd>{{.Notice}}</dd>
<dt>Data de emissão</dt><dd>{{.IssuedAt}}</dd>
<dt>Data dos fatos</dt><dd>{{.FactsDate}}</dd>
<dt>Artigos infringidos</dt><dd>{{range $i, $a := .Articles}}{{if $i}}; {{end}}{{$a}}{{end}}</dd>
{{if .Penalty}}<dt>Penalidade</dt><dd>{{.Penalty}}</dd>{{end}}
<dt>Hash SHA-256 do pacote de evidências</dt><dd><code>{{.Hash}}</code></dd>
<dt>Posição na cadeia de autos</dt><dd>{{.Seq}}</dd>
<dt>Chave pública do monitor (Ed25519)</dt><dd><code>{{.PublicKey}}</code></dd>
<dt>Impressão digital da chave (SHA-256)</dt><dd><code>{{.Fingerprint}}</code>{{if not .KeyIsOurs}} — <strong>o auto não foi assinado por esta chave</strong>{{end}}</dd>
</dl>
<p><small>Confira a impressão digital com a publicada pelo Município. Esta página não mostra dados pessoais nem posições; o auto completo é entregue ao autuado.</small></p>
{{with .Upload}}{{if .Match}}<p class="ok"><strong>Confere com o registro.</strong> {{.What}}</p>{{else}}<p class="bad"><strong>Não confere com o registro.</strong> {{.What}}</p>{{end}}{{end}}
<form method="post" enctype="multipart/form-data">
<label for="arquivo"><strong>Confere com o registro?</strong> Envie o PDF do auto ou o pacote de evidências (exportação JSON) para conferir com o registrado.</label><br>
<input type="file" id="arquivo" name="arquivo" required accept=".pdf,.json,application/pdf,application/json"> <button type="submit">Conferir</button>
</form>
{{end}}
</body></html>
`))
