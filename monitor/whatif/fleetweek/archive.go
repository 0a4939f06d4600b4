package fleetweek

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/trenzinho/trenzinho/ingest/archive"
)

// WriteArchive writes the batches to the InfluxDB 1.8 at baseURL, database db, exactly as ingest
// encodes them (archive.AppendLines), each received 400 ms after it was sent: the archive a
// replay reads, without a broker.
func WriteArchive(ctx context.Context, baseURL, db string, batches []Batch) error {
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/write?db="+url.QueryEscape(db)+"&precision=ns", bytes.NewReader(buf))
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("fleetweek: write: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("fleetweek: write: %s", resp.Status)
		}
		buf = buf[:0]
		return nil
	}
	for _, b := range batches {
		var err error
		if buf, _, err = archive.AppendLines(buf, b.Batch, b.SentAt.Add(400*time.Millisecond), len(b.Payload)); err != nil {
			return err
		}
		if len(buf) > 4<<20 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
