package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/trenzinho/trenzinho/monitor/photo"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// PutPhoto stores a checked photo under its SHA-256, once: the same bytes sent again (a phone
// retrying after a lost answer) keep the first receipt's time and sender. It returns the photo
// as stored.
func (db *DB) PutPhoto(ctx context.Context, info *photo.Info, data []byte, by string) (*rules.Photo, error) {
	var exif []byte
	if info.EXIF != nil {
		var err error
		if exif, err = json.Marshal(info.EXIF); err != nil {
			return nil, fmt.Errorf("store: photo %s: %w", info.SHA256, err)
		}
	}
	_, err := db.db.ExecContext(ctx, `INSERT INTO photos (sha256, content_type, size, width, height, exif, data, uploaded_by, received_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, info.SHA256, info.ContentType, info.Size, info.Width, info.Height,
		sql.NullString{String: string(exif), Valid: exif != nil}, data, by, millis(db.now()))
	if err != nil {
		return nil, fmt.Errorf("store: photo %s: %w", info.SHA256, err)
	}
	return db.PhotoInfo(ctx, info.SHA256)
}

// PhotoInfo returns what is known of a stored photo, ErrNotFound when none has that hash.
func (db *DB) PhotoInfo(ctx context.Context, sha256hex string) (*rules.Photo, error) {
	var (
		p        rules.Photo
		exif     sql.NullString
		received int64
	)
	err := db.db.QueryRowContext(ctx, `SELECT sha256, content_type, size, width, height, exif, received_at FROM photos WHERE sha256 = ?`,
		sha256hex).Scan(&p.SHA256, &p.ContentType, &p.Size, &p.Width, &p.Height, &exif, &received)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: photo %s: %w", sha256hex, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: photo %s: %w", sha256hex, err)
	}
	p.ReceivedAt = wire.NewTime(fromMillis(received))
	if exif.Valid {
		var x photo.EXIF
		if err := json.Unmarshal([]byte(exif.String), &x); err != nil {
			return nil, fmt.Errorf("store: photo %s: exif: %w", sha256hex, err)
		}
		p.EXIFTakenAt, p.EXIFZoneStated, p.EXIFLat, p.EXIFLon = x.TakenAt, x.ZoneStated, x.Lat, x.Lon
	}
	return &p, nil
}

// PhotoData returns a stored photo's bytes and content type, ErrNotFound when none has that
// hash.
func (db *DB) PhotoData(ctx context.Context, sha256hex string) ([]byte, string, error) {
	var (
		data []byte
		ct   string
	)
	err := db.db.QueryRowContext(ctx, `SELECT data, content_type FROM photos WHERE sha256 = ?`, sha256hex).Scan(&data, &ct)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("store: photo %s: %w", sha256hex, ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: photo %s: %w", sha256hex, err)
	}
	return data, ct, nil
}
