package registry

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// DefaultWatchInterval is how often Watch looks at the registry file.
const DefaultWatchInterval = 2 * time.Second

// Watch reloads the store from its file (ingest and the monitor each watch theirs) whenever the file changes (another identity after an
// atomic rename, another size or modification time), until ctx ends: a key registered by
// `monitor vehicle add`, or by hand, is used within interval. An invalid file is logged and the
// previous registry kept. The store's own writes also count as changes; reloading them is
// harmless.
func (s *Store) Watch(ctx context.Context, interval time.Duration, log *slog.Logger) {
	path := s.Path()
	if path == "" {
		return
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	last, _ := os.Stat(path)
	t := time.NewTicker(interval)
	defer t.Stop()
	missing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, err := os.Stat(path)
		if err != nil {
			if !missing {
				log.Warn("registry file unreadable; keeping the registry in memory", "path", path, "err", err)
			}
			missing = true
			continue
		}
		missing = false
		if last != nil && os.SameFile(fi, last) && fi.Size() == last.Size() && fi.ModTime().Equal(last.ModTime()) {
			continue
		}
		last = fi
		if err := s.Reload(); err != nil {
			log.Error("registry file changed but is invalid; keeping the previous registry", "path", path, "err", err)
			continue
		}
		log.Info("registry reloaded", "path", path, "vehicles", len(s.Vehicles()))
	}
}
