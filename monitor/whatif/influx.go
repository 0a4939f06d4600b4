package whatif

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Influx reads the archive that ingest writes (docs/storage.md) through InfluxDB's /query
// endpoint in InfluxQL, answered as CSV in chunks: the rows of one query are parsed as they
// arrive, so a query holds at most one chunk in memory whatever the rows it returns. InfluxDB
// 1.8 answers it natively; 2.x through its 1.x compatibility API (a DBRP mapping of the bucket).
type Influx struct {
	base   string
	db, rp string
	user   string
	pass   string
	token  string
	client *http.Client
	// ChunkSize is how many rows InfluxDB sends per chunk (10,000 by default).
	ChunkSize int
	// Compress asks InfluxDB for gzip answers: worth it over a slow link only.
	Compress bool
}

// InfluxConfig locates the archive: the same settings as ingest's (config.Influx).
type InfluxConfig struct {
	URL string
	// Token is "user:password" for InfluxDB 1.8 (empty without authentication), an API token
	// for 2.x.
	Token string
	// Bucket is "db/rp" ("db" alone means the default retention policy).
	Bucket string
}

// NewInflux returns a reader of the archive.
func NewInflux(cfg InfluxConfig) (*Influx, error) {
	if cfg.URL == "" {
		return nil, errors.New("whatif: InfluxDB URL is empty (TRENZINHO_INFLUX_URL)")
	}
	if cfg.Bucket == "" {
		return nil, errors.New("whatif: InfluxDB bucket is empty (TRENZINHO_INFLUX_BUCKET)")
	}
	i := &Influx{base: strings.TrimRight(cfg.URL, "/"), client: &http.Client{}, ChunkSize: 10000}
	i.db, i.rp, _ = strings.Cut(cfg.Bucket, "/")
	if i.rp == "autogen" {
		i.rp = "" // the default policy, whatever its name
	}
	if u, p, ok := strings.Cut(cfg.Token, ":"); ok {
		i.user, i.pass = u, p
	} else {
		i.token = cfg.Token
	}
	return i, nil
}

// measurement returns the quoted measurement name, with its retention policy when one is set.
func (i *Influx) measurement(m string) string {
	if i.rp == "" {
		return strconv.Quote(m)
	}
	return strconv.Quote(i.db) + "." + strconv.Quote(i.rp) + "." + strconv.Quote(m)
}

// row is one row of a CSV answer: the cells after name and tags (time first).
type row []string

// query runs one InfluxQL statement and calls fn for each row (its cells, time first, in
// milliseconds since the epoch); fn must not keep c.
func (i *Influx) query(ctx context.Context, q string, fn func(c *cells) error) error {
	v := url.Values{"q": {q}, "db": {i.db}, "epoch": {"ms"}, "chunked": {"true"}, "chunk_size": {strconv.Itoa(i.ChunkSize)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, i.base+"/query?"+v.Encode(), nil)
	if err != nil {
		return fmt.Errorf("whatif: influx query: %w", err)
	}
	req.Header.Set("Accept", "application/csv")
	// Uncompressed: gzip cost influxd more CPU than the query itself, and the archive is
	// normally on the same host or network (Compress turns it back on).
	if !i.Compress {
		req.Header.Set("Accept-Encoding", "identity")
	}
	switch {
	case i.user != "":
		req.SetBasicAuth(i.user, i.pass)
	case i.token != "":
		req.Header.Set("Authorization", "Token "+i.token)
	}
	resp, err := i.client.Do(req)
	if err != nil {
		return fmt.Errorf("whatif: influx query: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("whatif: influx query %q: %s: %s", q, resp.Status, strings.TrimSpace(string(b)))
	}
	cr := csv.NewReader(resp.Body)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var cols []string
	c := &cells{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("whatif: influx query %q: %w", q, err)
		}
		if len(rec) == 0 || (len(rec) == 1 && rec[0] == "") {
			continue
		}
		// Every chunk (and every series) starts with its header: name,tags,time,fields…
		if rec[0] == "name" && len(rec) > 2 && rec[1] == "tags" {
			cols = append(cols[:0], rec[2:]...)
			c.idx = colIndex(cols)
			continue
		}
		if rec[0] == "error" || cols == nil {
			return fmt.Errorf("whatif: influx query %q: %s", q, strings.Join(rec, ","))
		}
		if len(rec) < 2+len(cols) {
			return fmt.Errorf("whatif: influx query %q: short row %q", q, rec)
		}
		c.r = rec[2:]
		if err := fn(c); err != nil {
			return err
		}
	}
}

// Vehicles lists the vehicles with batches archived in [from, to).
func (i *Influx) Vehicles(ctx context.Context, from, to time.Time) ([]string, error) {
	// SHOW TAG VALUES ignores time in 1.8: ask for the batches' vehicles by a count instead.
	q := fmt.Sprintf(`SELECT count("seq") FROM %s WHERE time >= %dms AND time < %dms GROUP BY "vehicle"`,
		i.measurement("batch"), from.UnixMilli(), to.UnixMilli())
	var out []string
	err := i.queryTags(ctx, q, func(tags string) {
		if v, ok := strings.CutPrefix(tags, "vehicle="); ok && !slices.Contains(out, v) {
			out = append(out, v)
		}
	})
	slices.Sort(out)
	return out, err
}

// queryTags runs a grouped query and calls fn with the tags cell of each row.
func (i *Influx) queryTags(ctx context.Context, q string, fn func(tags string)) error {
	v := url.Values{"q": {q}, "db": {i.db}, "epoch": {"ms"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, i.base+"/query?"+v.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/csv")
	// Uncompressed: gzip cost influxd more CPU than the query itself, and the archive is
	// normally on the same host or network (Compress turns it back on).
	if !i.Compress {
		req.Header.Set("Accept-Encoding", "identity")
	}
	switch {
	case i.user != "":
		req.SetBasicAuth(i.user, i.pass)
	case i.token != "":
		req.Header.Set("Authorization", "Token "+i.token)
	}
	resp, err := i.client.Do(req)
	if err != nil {
		return fmt.Errorf("whatif: influx query: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("whatif: influx query %q: %s: %s", q, resp.Status, strings.TrimSpace(string(b)))
	}
	cr := csv.NewReader(resp.Body)
	cr.FieldsPerRecord = -1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("whatif: influx query %q: %w", q, err)
		}
		if len(rec) < 2 || (rec[0] == "name" && rec[1] == "tags") {
			continue
		}
		if rec[0] == "error" {
			return fmt.Errorf("whatif: influx query %q: %s", q, strings.Join(rec, ","))
		}
		fn(rec[1])
	}
}

// selectRange is the statement reading fields of a vehicle's measurement in [from, to).
func (i *Influx) selectRange(m string, fields []string, vehicle string, from, to time.Time) string {
	q := make([]string, len(fields))
	for k, f := range fields {
		q[k] = strconv.Quote(f)
	}
	return fmt.Sprintf(`SELECT %s FROM %s WHERE "vehicle" = '%s' AND time >= %dms AND time < %dms ORDER BY time ASC`,
		strings.Join(q, ","), i.measurement(m), strings.ReplaceAll(vehicle, `'`, `\'`), from.UnixMilli(), to.UnixMilli())
}

// cells helps parse the cells of a row by column name.
type cells struct {
	idx map[string]int
	r   row
}

func (c *cells) str(name string) string {
	if k, ok := c.idx[name]; ok && k < len(c.r) {
		return c.r[k]
	}
	return ""
}

func (c *cells) float(name string) (*float64, error) {
	s := c.str(name)
	if s == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

func (c *cells) int(name string) (int64, bool, error) {
	s := c.str(name)
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", name, err)
	}
	return n, true, nil
}

func (c *cells) bool(name string) (v, ok bool) {
	switch c.str(name) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// ms returns the row's time.
func (c *cells) ms() (time.Time, error) {
	n, err := strconv.ParseInt(c.r[0], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("time: %w", err)
	}
	return time.UnixMilli(n).UTC(), nil
}
