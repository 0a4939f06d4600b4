package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A migration is one step of the schema: the SQL that brings a database from version-1 to
// version.
type migration struct {
	version int
	sql     string
}

// migrations is the schema's history, applied in order by Open. Each step runs in its own
// transaction together with its row in schema_migrations, so a database is always at one of
// these versions.
//
// Later changes APPEND steps here with the next version number. Never edit, reorder
// or remove a step once it has been committed: databases in the field have applied it and will
// not run it again. To change a table, add a step that alters it (or creates a new table, copies
// and renames, as https://www.sqlite.org/lang_altertable.html describes).
var migrations = []migration{
	{1, `
CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	name          TEXT    NOT NULL UNIQUE COLLATE NOCASE,
	password_hash TEXT    NOT NULL,
	role          TEXT    NOT NULL CHECK (role IN ('viewer', 'fiscal', 'supervisor', 'admin')),
	created_at    INTEGER NOT NULL,
	disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1))
) STRICT;

-- A session is known by the SHA-256 of its token; the token itself is never stored.
CREATE TABLE sessions (
	token_hash BLOB    PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- The audit log names users by name, not id: it outlives accounts.
CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	time        INTEGER NOT NULL,
	user        TEXT    NOT NULL,
	action      TEXT    NOT NULL,
	object      TEXT    NOT NULL,
	before      TEXT CHECK (before IS NULL OR json_valid(before)),
	after       TEXT CHECK (after IS NULL OR json_valid(after)),
	remote_addr TEXT    NOT NULL
) STRICT;
CREATE INDEX audit_user ON audit (user, id);
CREATE INDEX audit_action ON audit (action, id);
CREATE INDEX audit_object ON audit (object, id);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'the audit log is append-only');
END;

-- doc is the episode's whole JSON (rules.Episode without its readings); the other columns
-- index it.
CREATE TABLE episodes (
	id         TEXT    PRIMARY KEY,
	vehicle    TEXT    NOT NULL,
	rule       TEXT    NOT NULL,
	start_at   INTEGER NOT NULL,
	end_at     INTEGER,
	open       INTEGER NOT NULL CHECK (open IN (0, 1)),
	doc        TEXT    NOT NULL CHECK (json_valid(doc)),
	updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX episodes_start ON episodes (start_at DESC, id);
CREATE INDEX episodes_vehicle ON episodes (vehicle, start_at DESC, id);
CREATE INDEX episodes_rule ON episodes (rule, start_at DESC, id);
CREATE INDEX episodes_open ON episodes (start_at DESC, id) WHERE open = 1;

-- One row per reading that proves an episode; the key makes a replayed reading a no-op.
CREATE TABLE evidence (
	episode_id TEXT    NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
	kind       TEXT    NOT NULL,
	epoch      TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	t          INTEGER NOT NULL,
	value      REAL    NOT NULL,
	unit       TEXT    NOT NULL,
	lat        REAL,
	lon        REAL,
	PRIMARY KEY (episode_id, kind, epoch, seq, t)
) STRICT, WITHOUT ROWID;
`},
	{2, `
-- The rules engine's state per vehicle (cursors of judged batches, detectors, open episodes),
-- committed in the same transaction as the episodes it produced.
CREATE TABLE vehicle_state (
	vehicle    TEXT    PRIMARY KEY,
	snapshot   TEXT    NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`},
	{3, `
-- Every judged telemetry batch, verbatim, for the evidence bundles of drafts (pruned after the
-- retention period; a draft keeps its own copy).
CREATE TABLE batch_log (
	vehicle     TEXT    NOT NULL,
	epoch       TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	received_at INTEGER NOT NULL,
	t_min       INTEGER NOT NULL,
	t_max       INTEGER NOT NULL,
	payload     BLOB    NOT NULL,
	PRIMARY KEY (vehicle, epoch, seq)
) STRICT;
CREATE INDEX batch_log_time ON batch_log (vehicle, t_max);
CREATE INDEX batch_log_received ON batch_log (received_at);

-- Drafts, sealed: the bundle's bytes, their hash, the previous draft's hash and the monitor's
-- signature. seq orders the chain.
CREATE TABLE drafts (
	seq        INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	vehicle    TEXT    NOT NULL,
	status     TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	doc        TEXT    NOT NULL,
	bundle     BLOB    NOT NULL,
	hash       TEXT    NOT NULL,
	prev_hash  TEXT    NOT NULL,
	signature  TEXT    NOT NULL,
	public_key TEXT    NOT NULL,
	notice     TEXT    UNIQUE,
	decided_by TEXT,
	decided_at INTEGER,
	reason     TEXT
) STRICT;
CREATE INDEX drafts_status ON drafts (status, created_at);

-- An episode belongs to at most one draft: making a draft twice is impossible.
CREATE TABLE draft_episodes (
	episode_id TEXT PRIMARY KEY,
	draft_id   TEXT NOT NULL REFERENCES drafts (id)
) STRICT, WITHOUT ROWID;

-- Data that arrived after a draft was made, shown to the agent; never rewrites the draft.
CREATE TABLE draft_addenda (
	id         INTEGER PRIMARY KEY,
	draft_id   TEXT    NOT NULL REFERENCES drafts (id),
	episode_id TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	doc        TEXT    NOT NULL
) STRICT;
CREATE INDEX draft_addenda_draft ON draft_addenda (draft_id);
`},
	{4, `
-- Cases: the notices (autos de infração) the penalty calculus counts, and their administrative
-- process (Art. 51–57). A case is an issued draft, a manual notice written by an agent, or an
-- earlier paper notice imported. Its identity, its facts (doc) and the penalty calculus made when
-- it was issued (assessment) never change; what happened to it is the append-only list of
-- case_events, from which its state is derived. state is that derivation, kept in the same
-- transaction as each event so that cases can be listed by state.
CREATE TABLE cases (
	id         INTEGER PRIMARY KEY,
	notice     TEXT    NOT NULL UNIQUE,
	origin     TEXT    NOT NULL CHECK (origin IN ('draft', 'manual', 'import')),
	draft_id   TEXT    UNIQUE REFERENCES drafts (id),
	vehicle    TEXT    NOT NULL,
	licensee   TEXT    NOT NULL,
	offence_at INTEGER NOT NULL,
	issued_at  INTEGER NOT NULL,
	state      TEXT    NOT NULL,
	doc        TEXT    NOT NULL CHECK (json_valid(doc)),
	assessment TEXT    CHECK (assessment IS NULL OR json_valid(assessment)),
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	CHECK ((origin = 'draft') = (draft_id IS NOT NULL))
) STRICT;
CREATE INDEX cases_state ON cases (state, id);
CREATE INDEX cases_licensee ON cases (licensee, offence_at);
CREATE INDEX cases_origin ON cases (origin, id);
CREATE TRIGGER cases_fixed BEFORE UPDATE OF id, notice, origin, draft_id, vehicle, licensee, offence_at,
	issued_at, doc, assessment, created_at ON cases
BEGIN
	SELECT RAISE(ABORT, 'a case keeps its notice, facts and penalty calculus: append an event instead');
END;
CREATE TRIGGER cases_no_delete BEFORE DELETE ON cases
BEGIN
	SELECT RAISE(ABORT, 'cases are never deleted');
END;

-- What happened to a case, in order: issue (or import), notify, defence, decide, pay,
-- divida_ativa, suspension. date is the day of the act as declared (YYYY-MM-DD; '' for issue and
-- import), at when it was recorded, data the act's details.
CREATE TABLE case_events (
	case_id INTEGER NOT NULL REFERENCES cases (id),
	seq     INTEGER NOT NULL CHECK (seq > 0),
	action  TEXT    NOT NULL,
	date    TEXT    NOT NULL,
	at      INTEGER NOT NULL,
	user    TEXT    NOT NULL,
	data    TEXT    NOT NULL CHECK (json_valid(data)),
	PRIMARY KEY (case_id, seq)
) STRICT;
CREATE TRIGGER case_events_no_update BEFORE UPDATE ON case_events
BEGIN
	SELECT RAISE(ABORT, 'case events are append-only');
END;
CREATE TRIGGER case_events_no_delete BEFORE DELETE ON case_events
BEGIN
	SELECT RAISE(ABORT, 'case events are append-only');
END;

-- Drafts issued before this step become cases, issued, without a penalty calculus (none was made
-- when they were issued).
INSERT INTO cases (notice, origin, draft_id, vehicle, licensee, offence_at, issued_at, state, doc, assessment, created_at, updated_at)
SELECT notice, 'draft', id, vehicle, coalesce(json_extract(doc, '$.licensee'), ''),
	CAST(unixepoch(json_extract(doc, '$.start'), 'subsec') * 1000 AS INTEGER), decided_at, 'issued',
	json_object('rules', json(json_extract(doc, '$.rules')), 'articles', json(json_extract(doc, '$.articles')),
		'penalty', json_extract(doc, '$.penalty'), 'issued_by', coalesce(decided_by, '')),
	NULL, decided_at, decided_at
FROM drafts WHERE status = 'issued' AND notice IS NOT NULL AND decided_at IS NOT NULL ORDER BY seq;
INSERT INTO case_events (case_id, seq, action, date, at, user, data)
SELECT id, 1, 'issue', '', issued_at, json_extract(doc, '$.issued_by'), json_object('migrated', json('true'))
FROM cases;
`},
	{5, `
-- Telemetry the monitor could not keep: a batch its database refused (unstorable), a replay
-- whose content differs from the batch judged under the same (vehicle, epoch, seq) (conflict).
-- Tamper evidence, kept apart from the judged batches; bounded by QuarantineKeep rows.
CREATE TABLE quarantine (
	id          INTEGER PRIMARY KEY,
	received_at INTEGER NOT NULL,
	vehicle     TEXT    NOT NULL,
	topic       TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	payload     BLOB    NOT NULL,
	truncated   INTEGER NOT NULL
) STRICT;
CREATE INDEX quarantine_vehicle ON quarantine (vehicle, id);
`},
	{6, `
-- Users gain the agent's identification an auto prints (full name, matrícula, cargo) and the
-- role autoridade (the competent authority that decides on defences, Art. 57). SQLite cannot
-- change a CHECK: the table is rebuilt, keeping ids, and the sessions (which the drop of the
-- old table would cascade away) are kept aside and put back.
CREATE TEMP TABLE sessions_keep AS SELECT * FROM sessions;
CREATE TABLE users_new (
	id            INTEGER PRIMARY KEY,
	name          TEXT    NOT NULL UNIQUE COLLATE NOCASE,
	password_hash TEXT    NOT NULL,
	role          TEXT    NOT NULL CHECK (role IN ('viewer', 'fiscal', 'supervisor', 'autoridade', 'admin')),
	created_at    INTEGER NOT NULL,
	disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
	full_name     TEXT    NOT NULL DEFAULT '',
	matricula     TEXT    NOT NULL DEFAULT '',
	cargo         TEXT    NOT NULL DEFAULT ''
) STRICT;
INSERT INTO users_new (id, name, password_hash, role, created_at, disabled)
SELECT id, name, password_hash, role, created_at, disabled FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
INSERT INTO sessions SELECT * FROM sessions_keep;
DROP TABLE sessions_keep;
`},
	{7, `
-- Notifications the dispatcher gave up on (monitor/notify): a permanent error or the retries
-- exhausted. Kept across restarts for the admin to see and retry (notifydead.go), bounded by
-- count and age. address is where to send again (a push subscription with its keys: never
-- shown), display the address as the admin sees it, alerts the composed message's input.
CREATE TABLE notify_dead_letters (
	id            INTEGER PRIMARY KEY,
	at            INTEGER NOT NULL,
	user          TEXT    NOT NULL,
	channel       TEXT    NOT NULL,
	address       TEXT    NOT NULL,
	display       TEXT    NOT NULL,
	subject       TEXT    NOT NULL,
	episodes      TEXT    NOT NULL CHECK (json_valid(episodes)),
	alerts        TEXT    NOT NULL CHECK (json_valid(alerts)),
	attempts      INTEGER NOT NULL,
	error         TEXT    NOT NULL,
	retries       INTEGER NOT NULL DEFAULT 0,
	last_retry_at INTEGER
) STRICT;
CREATE INDEX notify_dead_letters_at ON notify_dead_letters (at);
`},
	{8, `
-- Vehicle snapshots are a compact binary form (rules/snapshot.go), which a STRICT TEXT
-- column refuses. The JSON snapshots already stored are kept as they are, as bytes: the engine
-- reads both forms, and the next commit of each vehicle rewrites it in the binary one.
CREATE TABLE vehicle_state_new (
	vehicle    TEXT    PRIMARY KEY,
	snapshot   BLOB    NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO vehicle_state_new (vehicle, snapshot, updated_at)
SELECT vehicle, CAST(snapshot AS BLOB), updated_at FROM vehicle_state;
DROP TABLE vehicle_state;
ALTER TABLE vehicle_state_new RENAME TO vehicle_state;
`},
	// Public verification: the unguessable
	// code of an issued auto's public page (/v/<code>), and the SHA-256 of every PDF the monitor
	// rendered of it, which an uploaded copy is compared with.
	{9, `
CREATE TABLE public_codes (
	draft_id   TEXT    PRIMARY KEY REFERENCES drafts (id),
	code       TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
) STRICT;
CREATE TABLE public_pdfs (
	draft_id   TEXT    NOT NULL REFERENCES drafts (id),
	sha256     TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (draft_id, sha256)
) STRICT;
`},
	{10, `
-- The service time of the batches the batch log pruned (transparency.go): per vehicle, the
-- merged spans from first to last reading, kept for good so that the public transparency report
-- counts a month's hours in service after its batches are gone. No position, no reading.
CREATE TABLE service_spans (
	vehicle TEXT    NOT NULL,
	t_from  INTEGER NOT NULL,
	t_to    INTEGER NOT NULL CHECK (t_to >= t_from),
	PRIMARY KEY (vehicle, t_from)
) STRICT, WITHOUT ROWID;
`},
	{11, `
-- The licensee's portal (monitor/api/portal.go): the role licensee, bound to one licensee of the
-- registry (users.licensee, '' for every other role); the ciência of autos notified
-- electronically; the defences and appeals filed online, with their attachments. The users
-- table is rebuilt as in step 6 (a CHECK cannot change), keeping ids and sessions.
CREATE TEMP TABLE sessions_keep AS SELECT * FROM sessions;
CREATE TABLE users_new (
	id            INTEGER PRIMARY KEY,
	name          TEXT    NOT NULL UNIQUE COLLATE NOCASE,
	password_hash TEXT    NOT NULL,
	role          TEXT    NOT NULL CHECK (role IN ('viewer', 'fiscal', 'supervisor', 'autoridade', 'admin', 'licensee')),
	created_at    INTEGER NOT NULL,
	disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
	full_name     TEXT    NOT NULL DEFAULT '',
	matricula     TEXT    NOT NULL DEFAULT '',
	cargo         TEXT    NOT NULL DEFAULT '',
	licensee      TEXT    NOT NULL DEFAULT '',
	CHECK ((role = 'licensee') = (licensee <> ''))
) STRICT;
INSERT INTO users_new (id, name, password_hash, role, created_at, disabled, full_name, matricula, cargo)
SELECT id, name, password_hash, role, created_at, disabled, full_name, matricula, cargo FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
INSERT INTO sessions SELECT * FROM sessions_keep;
DROP TABLE sessions_keep;

-- An auto made available in the portal (notification.electronic) and opened by the licensee's
-- user: the first opening, with the server's time, the client's address and the user. counted:
-- the opening was the ciência that delivered the auto (within the profile's days, the auto not
-- yet delivered otherwise).
CREATE TABLE electronic_openings (
	case_id     INTEGER PRIMARY KEY REFERENCES cases (id),
	opened_at   INTEGER NOT NULL,
	remote_addr TEXT    NOT NULL,
	user        TEXT    NOT NULL,
	counted     INTEGER NOT NULL CHECK (counted IN (0, 1))
) STRICT;

-- Defences and appeals filed online: the text, who filed it when and from where, the protocolo.
CREATE TABLE filings (
	id          INTEGER PRIMARY KEY,
	case_id     INTEGER NOT NULL REFERENCES cases (id),
	kind        TEXT    NOT NULL CHECK (kind IN ('defence', 'appeal')),
	protocolo   TEXT    NOT NULL UNIQUE,
	filed_at    INTEGER NOT NULL,
	day         TEXT    NOT NULL,
	user        TEXT    NOT NULL,
	remote_addr TEXT    NOT NULL,
	text        TEXT    NOT NULL
) STRICT;
CREATE INDEX filings_case ON filings (case_id, id);
CREATE TABLE filing_files (
	filing_id    INTEGER NOT NULL REFERENCES filings (id),
	n            INTEGER NOT NULL,
	name         TEXT    NOT NULL,
	content_type TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT    NOT NULL,
	data         BLOB    NOT NULL,
	PRIMARY KEY (filing_id, n)
) STRICT;
`},
	// Triage: the triage state of each alert (an episode) and its history. An
	// episode without a row is "novo". The history — acknowledgements, assignments, comments,
	// clearings, reopenings and escalations — is append-only like the audit log (triage.go).
	{12, `
CREATE TABLE episode_triage (
	episode_id   TEXT    PRIMARY KEY REFERENCES episodes (id) ON DELETE CASCADE,
	state        TEXT    NOT NULL CHECK (state IN ('novo', 'reconhecido', 'atribuido', 'encerrado')),
	acked_by     TEXT    NOT NULL DEFAULT '',
	acked_at     INTEGER,
	assignee     TEXT    NOT NULL DEFAULT '',
	assigned_by  TEXT    NOT NULL DEFAULT '',
	assigned_at  INTEGER,
	cleared_by   TEXT    NOT NULL DEFAULT '',
	cleared_at   INTEGER,
	clear_reason TEXT    NOT NULL DEFAULT '',
	escalated_at INTEGER,
	updated_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX episode_triage_state ON episode_triage (state, assignee);
CREATE TABLE episode_triage_events (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	episode_id TEXT    NOT NULL REFERENCES episodes (id),
	at         INTEGER NOT NULL,
	user       TEXT    NOT NULL,
	act        TEXT    NOT NULL CHECK (act IN ('ack', 'assign', 'comment', 'clear', 'reopen', 'escalate')),
	assignee   TEXT    NOT NULL DEFAULT '',
	text       TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX episode_triage_events_episode ON episode_triage_events (episode_id, id);
CREATE TRIGGER episode_triage_events_no_update BEFORE UPDATE ON episode_triage_events
BEGIN
	SELECT RAISE(ABORT, 'the triage history is append-only');
END;
CREATE TRIGGER episode_triage_events_no_delete BEFORE DELETE ON episode_triage_events
BEGIN
	SELECT RAISE(ABORT, 'the triage history is append-only');
END;
`},
	{13, `
-- The photos agents attach to field verifications (photos.go), by the SHA-256 of their bytes:
-- the bytes, what the monitor read of them (type, size, the EXIF statements as JSON), who sent
-- them first and when the monitor first received them.
CREATE TABLE photos (
	sha256       TEXT    PRIMARY KEY,
	content_type TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	width        INTEGER NOT NULL,
	height       INTEGER NOT NULL,
	exif         TEXT,
	data         BLOB    NOT NULL,
	uploaded_by  TEXT    NOT NULL,
	received_at  INTEGER NOT NULL
) STRICT;
`},
	// Who gets what: each user's notification preferences as they saved them in the
	// dashboard (Perfil → Notificações), and the on-duty schedule a supervisor edits. A shift names
	// its user by name, like the audit log: the schedule is a record of who was on call.
	{14, `
CREATE TABLE notify_prefs (
	user_id    INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	doc        TEXT    NOT NULL CHECK (json_valid(doc)),
	updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE notify_shifts (
	id         INTEGER PRIMARY KEY,
	user       TEXT    NOT NULL,
	t_from     INTEGER NOT NULL,
	t_to       INTEGER NOT NULL CHECK (t_to > t_from),
	created_by TEXT    NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX notify_shifts_to ON notify_shifts (t_to);
`},
	{15, `
-- The warnings of the bridges' driver's coach (docs/protocol.md §2.7), kept for good with their
-- batch's clock and the vehicle's licensee when judged: evidence of what the driver was told,
-- shown with the episodes that followed and counted per licensee. site is '' when none.
CREATE TABLE warnings (
	vehicle     TEXT    NOT NULL,
	t           INTEGER NOT NULL,
	kind        TEXT    NOT NULL,
	rule        TEXT    NOT NULL,
	site        TEXT    NOT NULL,
	licensee    TEXT    NOT NULL,
	clock       TEXT    NOT NULL,
	distance_m  REAL,
	value       REAL,
	limit_value REAL,
	epoch       TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	PRIMARY KEY (vehicle, t, kind, rule, site)
) STRICT, WITHOUT ROWID;
CREATE INDEX warnings_time ON warnings (t);
`},
	// Citizens' complaints (store/complaints.go): the complaint, its matching against
	// the telemetry and its answer, the moderation and the inspector's confirmation. contact is
	// personal data (LGPD), erased by retention or on request; no network address is kept.
	{16, `
CREATE TABLE complaints (
	id                    TEXT    PRIMARY KEY,
	code                  TEXT    NOT NULL UNIQUE,
	created_at            INTEGER NOT NULL,
	source                TEXT    NOT NULL CHECK (source IN ('form', '156')),
	external_ref          TEXT    NOT NULL DEFAULT '',
	lat                   REAL    NOT NULL,
	lon                   REAL    NOT NULL,
	address               TEXT    NOT NULL DEFAULT '',
	at                    INTEGER NOT NULL,
	kind                  TEXT    NOT NULL,
	text                  TEXT    NOT NULL DEFAULT '',
	contact               TEXT,
	contact_erased_at     INTEGER,
	contact_erased_reason TEXT,
	result                TEXT    NOT NULL,
	answer                TEXT    NOT NULL,
	status                TEXT    NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
	moderated_by          TEXT,
	moderated_at          INTEGER,
	moderation_note       TEXT,
	confirmed_vehicle     TEXT,
	episode_id            TEXT,
	confirmed_by          TEXT,
	confirmed_at          INTEGER,
	email_sent_at         INTEGER
) STRICT;
CREATE INDEX complaints_created ON complaints (created_at, id);
CREATE INDEX complaints_episode ON complaints (episode_id) WHERE episode_id IS NOT NULL;
CREATE INDEX complaints_contact ON complaints (created_at) WHERE contact IS NOT NULL;
`},
	// Web Push from the dashboard: the push subscriptions a user made in Perfil →
	// Notificações, one per browser (device). An endpoint is one browser's: it belongs to one
	// user at a time (store/pushsubs.go).
	{17, `
CREATE TABLE notify_push_subs (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	endpoint   TEXT    NOT NULL UNIQUE,
	sub        TEXT    NOT NULL CHECK (json_valid(sub)),
	label      TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX notify_push_subs_user ON notify_push_subs (user_id);
`},
	// The notified document is frozen: the bytes of an issued auto's PDF as first rendered
	// (at its issue), served for every later download whatever the profile or the map tiles
	// say then, and never changed (store/public.go, FreezePDF).
	{18, `
CREATE TABLE issued_pdfs (
	draft_id   TEXT    PRIMARY KEY REFERENCES drafts (id),
	sha256     TEXT    NOT NULL,
	pdf        BLOB    NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE TRIGGER issued_pdfs_no_update BEFORE UPDATE ON issued_pdfs
BEGIN SELECT RAISE(ABORT, 'issued_pdfs is append-only'); END;
CREATE TRIGGER issued_pdfs_no_delete BEFORE DELETE ON issued_pdfs
BEGIN SELECT RAISE(ABORT, 'issued_pdfs is append-only'); END;
`},
	// The proofs of a delivery: documents kept with a case, as the scan of a return receipt
	// (AR) a delivery by post names (monitor/cases, proofs.go); never changed nor removed.
	{19, `
CREATE TABLE case_attachments (
	id           INTEGER PRIMARY KEY,
	case_id      INTEGER NOT NULL REFERENCES cases (id),
	kind         TEXT    NOT NULL CHECK (kind IN ('ar')),
	name         TEXT    NOT NULL,
	content_type TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT    NOT NULL,
	user         TEXT    NOT NULL,
	uploaded_at  INTEGER NOT NULL,
	data         BLOB    NOT NULL
) STRICT;
CREATE INDEX case_attachments_case ON case_attachments (case_id, id);
CREATE TRIGGER case_attachments_no_update BEFORE UPDATE ON case_attachments
BEGIN SELECT RAISE(ABORT, 'case_attachments is append-only'); END;
CREATE TRIGGER case_attachments_no_delete BEFORE DELETE ON case_attachments
BEGIN SELECT RAISE(ABORT, 'case_attachments is append-only'); END;
`},
	// The electronic notice's ciência is an act of its own, declared by the licensee's
	// representative after the auto's PDF was served (monitor/cases, electronic.go): each
	// download of the PDF in the portal, with who, when, from where and the hash of the bytes
	// served; never changed nor removed. electronic_openings.counted is no longer written (an
	// opening delivers nothing); rows of earlier versions keep it.
	{20, `
CREATE TABLE pdf_servings (
	id          INTEGER PRIMARY KEY,
	case_id     INTEGER NOT NULL REFERENCES cases (id),
	served_at   INTEGER NOT NULL,
	user        TEXT    NOT NULL,
	remote_addr TEXT    NOT NULL,
	sha256      TEXT    NOT NULL
) STRICT;
CREATE INDEX pdf_servings_case ON pdf_servings (case_id, user, id);
CREATE TRIGGER pdf_servings_no_update BEFORE UPDATE ON pdf_servings
BEGIN SELECT RAISE(ABORT, 'pdf_servings is append-only'); END;
CREATE TRIGGER pdf_servings_no_delete BEFORE DELETE ON pdf_servings
BEGIN SELECT RAISE(ABORT, 'pdf_servings is append-only'); END;
`},
	// The documents of a case's process, frozen as first made (as issued_pdfs keeps the auto):
	// a filing's receipt (kind receipt, ref the filing's id) and a decision (kind decision, ref
	// the seq of its event); never changed nor removed.
	{21, `
CREATE TABLE case_documents (
	case_id    INTEGER NOT NULL REFERENCES cases (id),
	kind       TEXT    NOT NULL CHECK (kind IN ('receipt', 'decision')),
	ref        INTEGER NOT NULL,
	sha256     TEXT    NOT NULL,
	pdf        BLOB    NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (case_id, kind, ref)
) STRICT;
CREATE TRIGGER case_documents_no_update BEFORE UPDATE ON case_documents
BEGIN SELECT RAISE(ABORT, 'case_documents is append-only'); END;
CREATE TRIGGER case_documents_no_delete BEFORE DELETE ON case_documents
BEGIN SELECT RAISE(ABORT, 'case_documents is append-only'); END;
`},
	// Failed logins, counted by every monitor on the database (users.go, LoginFailures): a
	// key is a client address or an account, scoped by the API ("address:…", "account:…").
	// Kept a day at most.
	{22, `
CREATE TABLE login_failures (
	key TEXT    NOT NULL,
	at  INTEGER NOT NULL
) STRICT;
CREATE INDEX login_failures_key ON login_failures (key, at);
CREATE INDEX login_failures_at ON login_failures (at);
`},
}

// migrate applies the steps of migrations the database has not recorded yet.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.db.ExecContext(ctx, `
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	applied_at INTEGER NOT NULL
) STRICT`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	current, err := db.schemaVersion(ctx)
	if err != nil {
		return err
	}
	if latest := migrations[len(migrations)-1].version; current > latest {
		return fmt.Errorf("store: database schema version %d is newer than this program's (%d)", current, latest)
	}
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			// Another process may have applied the step since we looked: the IMMEDIATE
			// transaction holds the write lock, so look again inside it.
			var done int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&done); err != nil {
				return err
			}
			if done > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, m.version, millis(db.now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %d: %w", m.version, err)
		}
	}
	return nil
}

// schemaVersion is the highest migration the database has applied, 0 for a new one.
func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
