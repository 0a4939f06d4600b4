// Package spool is the firmware bridge's crash-safe on-disk queue of encoded batches, and the
// keeper of its persistent sequence space (docs/protocol.md §5): the epoch, created once when the state
// directory is first initialised, and the seq of every batch, which starts at 1 in each epoch
// and increases by one per batch.
//
// The bridge calls Append with a function that builds and encodes the batch for the seq it is
// given; the seq is one above the last seq the spool holds, so allocating it and storing the
// batch are one step: a crash before the batch is durable leaves nothing behind and the seq is
// given again, and a crash after it keeps the batch, whose seq is never given again. The
// publisher reads durable batches in seq order with Pending, publishes them, and calls Ack
// when the broker acknowledges one (QoS 1 PUBACK). Acks may arrive in any order; the spool
// reclaims only the acknowledged prefix, and after a restart Pending returns every batch above
// that prefix again, including any acknowledged out of order (duplicates are allowed by the
// wire format; gaps are not). One goroutine may append while another reads and acknowledges.
//
// # Durability
//
// By default (Options.SyncEvery 1) Append returns only after the batch is on stable storage:
// the record is written and its file fsynced (and a new segment file's directory fsynced) before
// Append returns. At one batch every few seconds this costs one fsync per batch. A power cut
// therefore loses nothing that was appended; it can cost only the readings the bridge had not
// yet put into a batch.
//
// With SyncEvery n > 1, fsync happens on every nth append, on Sync and on Close. Appends in
// between return before they are durable, and Pending does not return them until they are, so
// the bridge never publishes a batch that a power cut could take back. A power cut can then
// drop up to n unpublished batches; their seqs are given again (they were never published),
// unless a later record of the same group reached the disk, in which case the spool keeps it
// and the lost ones stay a gap in the sequence.
//
// Acknowledgements are written to the state file on every Ack that moves the acknowledged
// prefix, but fsynced only before a segment file is deleted and on Close: a power cut can make
// the spool replay batches acknowledged in the last seconds before it (duplicates), never lose
// one. The epoch file is written once, atomically (temporary file, fsync, rename, directory
// fsync).
//
// # On-disk format
//
// The directory holds:
//
//	LOCK                      flock(2)ed while a Spool has the directory open
//	epoch                     the epoch id and a newline, e.g. "e-7f3a9c01b2d4\n"
//	state                     two 32-byte slots, written alternately (see below)
//	00000000000000000001.seg  segment files, named by the seq of their first record
//	quarantine/               damaged segments, kept for inspection (at most 8)
//	previous-epoch            after a lost epoch was recovered: the epoch it replaced, or "unknown"
//	rekey.new/, rekey.done/   only during that recovery (see below)
//
// A segment is the 8-byte magic "TZSPOOL1" followed by records, each a 16-byte header and the
// payload, all integers little-endian:
//
//	crc32c  uint32  CRC-32C (Castagnoli) of the rest of the header and the payload
//	length  uint32  payload length, at most MaxPayload
//	seq     uint64  the batch's seq
//	payload [length]byte
//
// Records in a segment have consecutive seqs starting at the seq in its name, and every seq in
// a segment is below the name of the next one. A new segment is started when a record would
// take a segment past Options.SegmentSize (4 MiB by default). A state slot holds a CRC-32C, the
// magic "TZS1", a generation number, the acknowledged seq (every seq up to it is acknowledged,
// evicted or lost) and the evicted counter; Open uses the valid slot with the higher generation.
//
// Open reads every segment and checks every record. The last segment of a spool that lost
// power may end in a torn record (a short header or payload, a bad CRC, zeros): if nothing
// valid follows it, the file is truncated at that record and the truncation counted in
// Stats.TornTails. (Damage to the very end of the last segment looks the same, and is treated
// the same way.) Anything else that fails the check is damage, not a torn write: the medium
// changed data that was once durable. Open then keeps every record it can still verify, by
// searching past the damaged bytes for the next record whose CRC and seq are valid; the seqs it
// could not read are counted in Stats.Lost and are a gap the receiver can see. A damaged
// segment is never appended to again, and once its readable records are acknowledged it is
// moved to quarantine/ rather than deleted. Seqs are never reused: the next seq is above every
// seq the spool can still verify, above the acknowledged seq in the state file, and, when the
// last segment is damaged at its end, above every seq its unreadable tail could have held. The
// last segment is never deleted by Ack, so the next seq survives the loss of the state file.
// Records are checked again when Pending reads them; one that no longer verifies is skipped
// and counted in Stats.Lost. Reading the whole spool makes Open take time in proportion to
// its size (about a second per 400 MB on a server; an SD card's read speed bounds it on a
// Raspberry Pi), and its index takes about 24 bytes of memory per stored batch.
//
// # A lost epoch
//
// Without Options.Rekey, Open refuses a directory that holds segments or a state file but no
// valid epoch file (ErrBadEpoch): its seqs belong to no epoch. With it (the bridge always sets
// it), Open starts a new epoch instead and stores every unacknowledged batch again under it,
// re-encoded by Rekey, with seqs from 1 in the old order. The re-keyed spool is written whole
// to rekey.new/, made durable and renamed rekey.done/; then the old segments are deleted and
// the new files moved in, the epoch file last. Open finishes an interrupted move and discards
// an interrupted rekey.new/ (the old spool is still whole then, and is recovered again).
//
// # Eviction
//
// The segment files are kept under Options.MaxBytes (512 MiB by default). When an Append would
// go past it, the oldest segments are deleted whole, acknowledged or not, before the new record
// is written; the unacknowledged batches they held are added to the persisted Evicted counter
// (reported in the bridge's status as spool_evicted) and logged. The acknowledged seq moves
// past them, so a publisher holding one of their seqs may still Ack it harmlessly. MaxBytes
// must leave room on the filesystem: when a write fails (the disk is full, say), Append
// returns the error, stores nothing, and gives the same seq to the next call.
package spool
