package drafts_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// BenchmarkDraftLongEpisode measures one draft of a speeding episode of the given length, its
// signed batches (one per 5 s) decoded and verified for the bundle, as the judge's drafter makes
// it: what a draft costs the goroutine that makes it. One op is one draft.
//
//	go test -run '^$' -bench DraftLongEpisode -benchtime 5x ./monitor/drafts/
func BenchmarkDraftLongEpisode(b *testing.B) {
	for _, minutes := range []int{5, 60, 240} {
		b.Run(fmt.Sprintf("%dmin", minutes), func(b *testing.B) {
			_, dkey, _ := ed25519.GenerateKey(rand.Reader)
			vkeyPub, vkey, _ := ed25519.GenerateKey(rand.Reader)
			lookup := func(string) (string, ed25519.PublicKey, bool) { return "k1", vkeyPub, true }
			speeds := fleettest.Repeat(45, minutes*60)
			speeds = append(speeds, fleettest.Repeat(20, 200)...)
			b.ResetTimer()
			b.StopTimer()
			for i := range b.N {
				dir := b.TempDir()
				db, err := store.Open(context.Background(), filepath.Join(dir, "m.db"))
				if err != nil {
					b.Fatal(err)
				}
				p := profile.Piuma()
				engine := rules.New(p, nil)
				var seq uint64
				fleettest.Play(b, engine, db, &seq, fleettest.Trip{Vehicle: "PIU-001", Card: "000000000086H101",
					Start: noonFriday.Add(time.Duration(i) * time.Hour), Key: vkey, Kid: "k1",
					Seconds: fleettest.Drive(-20.8367, -40.7292, speeds...)})
				d := drafts.NewDrafter(drafts.Config{Store: db, Profile: p, ProfileYAML: profile.PiumaYAML(), Key: dkey,
					Software: "bench", Settle: time.Minute, VehicleKey: lookup,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				b.StartTimer()
				made, err := d.Run(context.Background(), time.Now().Add(10*time.Minute))
				b.StopTimer()
				if err != nil || len(made) != 1 {
					b.Fatalf("%d drafts: %v", len(made), err)
				}
				if i == 0 {
					b.ReportMetric(float64(len(made[0].Sealed.Bundle))/1024, "bundle-KiB")
				}
				db.Close()
			}
		})
	}
}
