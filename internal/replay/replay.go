// Package replay tells a replayed batch from a changed one. A batch is identified by (vehicle,
// epoch, seq) (docs/protocol.md §5): the same triple again is a redelivery or a spool replay,
// byte for byte the same payload; the same triple with other bytes is a conflict — tamper
// evidence, since only the vehicle's bridge publishes on its topic. Ingest and the monitor keep
// the first and quarantine the second (reason conflict).
//
// A Cache remembers the digests of the most recent batches, a bounded number, without a query
// per batch; a conflict with a batch older than that is not detected by the cache (the monitor
// then compares with its batch log).
package replay

import (
	"crypto/sha256"
	"sync"
)

// Key identifies a batch.
type Key struct {
	Vehicle, Epoch string
	Seq            uint64
}

// Digest is the SHA-256 of a payload.
type Digest [sha256.Size]byte

// Sum returns the digest of payload.
func Sum(payload []byte) Digest { return sha256.Sum256(payload) }

// DefaultSize is the number of batches a Cache remembers by default: a minute of a 2,000-vehicle
// fleet at one batch per 5 s is 24,000; 100,000 take about 15 MB.
const DefaultSize = 100_000

// Cache remembers the digests of the last Size batches it was shown. It is safe for concurrent
// use.
type Cache struct {
	mu   sync.Mutex
	m    map[Key]Digest
	ring []Key // insertion order; the oldest is overwritten first
	next int
}

// New returns a cache of size batches (DefaultSize when size ≤ 0).
func New(size int) *Cache {
	if size <= 0 {
		size = DefaultSize
	}
	return &Cache{m: make(map[Key]Digest), ring: make([]Key, 0, size)}
}

// Check records the digest of the batch k when k is new, and reports whether k was seen before
// (seen) with another digest (conflict). The first digest of a key is kept.
func (c *Cache) Check(k Key, d Digest) (seen, conflict bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		return true, old != d
	}
	if len(c.ring) < cap(c.ring) {
		c.ring = append(c.ring, k)
	} else {
		delete(c.m, c.ring[c.next])
		c.ring[c.next] = k
		c.next = (c.next + 1) % len(c.ring)
	}
	c.m[k] = d
	return false, false
}

// Forget drops k, for a batch that was not kept after all (refused downstream), so that a
// corrected retransmission is not taken for a conflict.
func (c *Cache) Forget(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k) // its ring slot is reused in turn; deleting a key again is harmless
}
