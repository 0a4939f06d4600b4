package spool

import (
	"fmt"
	"testing"
)

const benchPayload = 2 << 10

// BenchmarkAppendAck measures the steady state of an online bridge: append a 2 KiB batch,
// publish it, acknowledge it. With SyncEvery 1 it is dominated by the fsync of every batch.
func BenchmarkAppendAck(b *testing.B) {
	for _, every := range []int{1, 64} {
		b.Run(fmt.Sprintf("SyncEvery=%d", every), func(b *testing.B) {
			s := mustOpen(b, b.TempDir(), Options{SyncEvery: every})
			defer mustClose(b, s)
			payload := payloadFor(1, 0, benchPayload)
			build := func(uint64) ([]byte, error) { return payload, nil }
			b.SetBytes(benchPayload)
			b.ReportAllocs()
			for b.Loop() {
				seq, err := s.Append(build)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Ack(seq); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReplay measures a bridge coming back after a long time offline: open a spool of
// 10,000 pending 2 KiB batches (about 20 MiB in 5 segments) and read them all in order.
func BenchmarkReplay(b *testing.B) {
	const n = 10000
	dir := b.TempDir()
	s := mustOpen(b, dir, Options{SyncEvery: 1000})
	for range n {
		if _, err := s.Append(func(seq uint64) ([]byte, error) { return payloadFor(seq, 0, benchPayload), nil }); err != nil {
			b.Fatal(err)
		}
	}
	mustClose(b, s)

	b.SetBytes(n * benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		s := mustOpen(b, dir, Options{})
		var cursor uint64
		got := 0
		for {
			recs, err := s.Pending(cursor, 64)
			if err != nil {
				b.Fatal(err)
			}
			if len(recs) == 0 {
				break
			}
			got += len(recs)
			cursor = recs[len(recs)-1].Seq
		}
		if got != n {
			b.Fatalf("replayed %d batches, want %d", got, n)
		}
		mustClose(b, s)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "batches/s")
}
