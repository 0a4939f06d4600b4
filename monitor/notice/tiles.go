package notice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	_ "image/png" // tiles are PNG or JPEG
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Tiles is the source of the base map under the mini-map: the slippy-map tile server the
// dashboard uses (TRENZINHO_TILE_URL). The URL comes from the configuration only; the tile
// numbers are computed from the evidence's positions, so no network input chooses what is
// fetched. Tiles are fetched when the PDF is rendered, all within Timeout: if any tile fails,
// the document falls back to the vector sketch (a partial base map would mislead). Fetched
// tiles are cached for a day (at most 512): one Tiles serves every render and must not be
// copied.
type Tiles struct {
	// URL is the template, with {z}, {x} and {y} and optionally {s} (a, b or c), e.g.
	// https://tile.openstreetmap.org/{z}/{x}/{y}.png.
	URL string
	// Attribution is printed under the map; empty: derived from the host ("© colaboradores do
	// OpenStreetMap" for openstreetmap.org).
	Attribution string
	// Timeout bounds the fetch of all the tiles of a map (default 4 s).
	Timeout time.Duration
	// Client fetches the tiles; nil: a client that follows no redirect.
	Client *http.Client
	// UserAgent identifies the monitor to the tile server (tile usage policies require it).
	UserAgent string
	// Logger reports why the base map was left out; nil: not reported.
	Logger *slog.Logger

	// The tiles fetched lately, so that printing the autos of one evening does not ask the
	// tile server for the same tiles again (tile usage policies ask clients to cache).
	mu    sync.Mutex
	cache map[tileKey]cachedTile
}

// cachedTile is a fetched tile, re-encoded, and when it was fetched.
type cachedTile struct {
	jpeg    []byte
	fetched time.Time
}

// The tile cache: at most tileCacheSize tiles (about 20 kB each), each kept tileCacheAge.
const (
	tileCacheSize = 512
	tileCacheAge  = 24 * time.Hour
)

// cached returns a tile fetched less than tileCacheAge ago.
func (t *Tiles) cached(k tileKey) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.cache[k]
	if !ok || time.Since(c.fetched) > tileCacheAge {
		return nil, false
	}
	return c.jpeg, true
}

// keep caches a tile, dropping the oldest when the cache is full.
func (t *Tiles) keep(k tileKey, b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil {
		t.cache = make(map[tileKey]cachedTile)
	}
	if len(t.cache) >= tileCacheSize {
		var oldest tileKey
		first := true
		for key, c := range t.cache {
			if first || c.fetched.Before(t.cache[oldest].fetched) {
				oldest, first = key, false
			}
		}
		delete(t.cache, oldest)
	}
	t.cache[k] = cachedTile{jpeg: b, fetched: time.Now()}
}

// Limits of a base map.
const (
	defaultTileTimeout = 4 * time.Second
	maxTiles           = 36      // tiles of one map
	maxTileBytes       = 2 << 20 // bytes of one tile
	maxTileSide        = 1024    // pixels
	tileFetchers       = 4       // tiles fetched at once
	// basePxPerMM is the resolution aimed at: the zoom is the largest whose tiles cover the map
	// at no more than this many pixels per millimetre (about 200 dpi).
	basePxPerMM = 8.0
)

// tileKey is a tile of the Web Mercator pyramid.
type tileKey struct{ z, x, y int }

// tileXY returns the tile holding (lat, lon) at zoom z.
func tileXY(lat, lon float64, z int) (x, y int) {
	n := math.Exp2(float64(z))
	x = int(math.Floor((lon + 180) / 360 * n))
	phi := lat * math.Pi / 180
	y = int(math.Floor((1 - math.Asinh(math.Tan(phi))/math.Pi) / 2 * n))
	limit := int(n) - 1
	return min(max(x, 0), limit), min(max(y, 0), limit)
}

// tileCorner returns the latitude and longitude of the north-west corner of tile (x, y) at
// zoom z.
func tileCorner(x, y, z int) (lat, lon float64) {
	n := math.Exp2(float64(z))
	lon = float64(x)/n*360 - 180
	lat = math.Atan(math.Sinh(math.Pi*(1-2*float64(y)/n))) * 180 / math.Pi
	return lat, lon
}

// zoomFor returns the zoom at which a box widthM metres wide, drawn widthMM millimetres wide
// at latitude lat, gets at most basePxPerMM pixels per millimetre.
func zoomFor(lat, widthM, widthMM float64) int {
	if !(widthM > 0) {
		return 0
	}
	// Metres per pixel at zoom 0 at the equator, for 256-pixel tiles.
	const equatorMPP = 2 * math.Pi * 6378137 / 256
	z := math.Floor(math.Log2(equatorMPP * math.Cos(lat*math.Pi/180) * basePxPerMM * widthMM / widthM))
	return int(min(max(z, 0), 19))
}

// url returns the URL of a tile.
func (t *Tiles) url(k tileKey) string {
	return strings.NewReplacer("{z}", strconv.Itoa(k.z), "{x}", strconv.Itoa(k.x), "{y}", strconv.Itoa(k.y),
		"{s}", string(rune('a'+(k.x+k.y)%3))).Replace(t.URL)
}

// attribution is what the map credits.
func (t *Tiles) attribution() string {
	if t.Attribution != "" {
		return t.Attribution
	}
	host := ""
	if u, err := url.Parse(t.URL); err == nil {
		host = u.Hostname()
	}
	if strings.HasSuffix(host, "openstreetmap.org") {
		return "© colaboradores do OpenStreetMap"
	}
	return "servidor de mapas " + host
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// fetch fetches the tiles, each decoded and re-encoded as an opaque JPEG (any PNG or JPEG the
// server sends becomes an image the PDF library reads), all within the timeout; an error if
// any fails.
func (t *Tiles) fetch(keys []tileKey) (map[tileKey][]byte, error) {
	if len(keys) > maxTiles {
		return nil, fmt.Errorf("%d tiles, more than %d", len(keys), maxTiles)
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = defaultTileTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := t.Client
	if client == nil {
		client = noRedirects
	}
	out := make([][]byte, len(keys))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(tileFetchers)
	for i, k := range keys {
		if b, ok := t.cached(k); ok {
			out[i] = b
			continue
		}
		g.Go(func() error {
			b, err := t.fetchOne(ctx, client, k)
			if err != nil {
				return fmt.Errorf("tile %d/%d/%d: %w", k.z, k.x, k.y, err)
			}
			t.keep(k, b)
			out[i] = b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	m := make(map[tileKey][]byte, len(keys))
	for i, k := range keys {
		m[k] = out[i]
	}
	return m, nil
}

func (t *Tiles) fetchOne(ctx context.Context, client *http.Client, k tileKey) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url(k), nil)
	if err != nil {
		return nil, err
	}
	if t.UserAgent != "" {
		req.Header.Set("User-Agent", t.UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxTileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTileBytes {
		return nil, errors.New("tile too large")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxTileSide || cfg.Height > maxTileSide {
		return nil, fmt.Errorf("tile of %d×%d pixels", cfg.Width, cfg.Height)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	// Opaque, on white: transparent parts of a tile are the paper.
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Over)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: 85}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
