package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/stdlib"
)

// The store's queries are written once, in the SQL both engines read, with SQLite's ? for a
// parameter. On PostgreSQL they go through pgDriver, a thin layer over pgx's database/sql
// driver that says them in PostgreSQL's words: $1, $2 … for the ?s, the column user quoted
// (bare, it is PostgreSQL's CURRENT_USER), and a bool parameter as the 0 or 1 the schema's
// integer columns hold (SQLite's driver stores it so).

// pgDriverName is the name pgDriver is registered under.
const pgDriverName = "trenzinho-pgx"

var registerPG sync.Once

// openPG opens a PostgreSQL database through pgDriver.
func openPG(url string) (*sql.DB, error) {
	registerPG.Do(func() { sql.Register(pgDriverName, pgDriver{stdlib.GetDefaultDriver()}) })
	return sql.Open(pgDriverName, url)
}

type pgDriver struct{ driver.Driver }

func (d pgDriver) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &pgConn{c.(*stdlib.Conn)}, nil
}

// pgConn is a pgx connection that rewrites each query (pgQuery) and bool parameter.
type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(pgQuery(query))
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, pgQuery(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, pgQuery(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, pgQuery(query), args)
}

// CheckNamedValue passes every value to pgx as it is (as stdlib.Conn does), but a bool, which
// the schema keeps as an integer 0 or 1.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return nil
}

var pgQueries sync.Map // query → its PostgreSQL form

// pgQuery is query in PostgreSQL's words: each ? outside a quoted string or identifier is $n,
// in order, and the bare word user is "user".
func pgQuery(query string) string {
	if q, ok := pgQueries.Load(query); ok {
		return q.(string)
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		switch ch := query[i]; {
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(query) && query[j] != ch {
				j++
			}
			b.WriteString(query[i:min(j+1, len(query))])
			i = j
		case ch == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
		case ch == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j - 1
		case isWordStart(query, i) && strings.HasPrefix(query[i:], "user") && !isWordChar(query, i+4):
			b.WriteString(`"user"`)
			i += 3
		default:
			b.WriteByte(ch)
		}
	}
	q := b.String()
	pgQueries.Store(query, q)
	return q
}

// isWordStart reports whether a word may begin at i: the byte before is no identifier's, nor
// a dot (a qualified name's column is another matter) — nor a $ of a parameter.
func isWordStart(s string, i int) bool {
	return i == 0 || !isWordChar(s, i-1) && s[i-1] != '.' && s[i-1] != '$'
}

func isWordChar(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
