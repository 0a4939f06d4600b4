package gps

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecodeFile decodes all the gpsd captures; b.SetBytes makes the result a
// throughput.
func BenchmarkDecodeFile(b *testing.B) {
	dir := gpsdDir(b)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var all []byte
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data...)
		all = append(all, '\n')
	}
	b.SetBytes(int64(len(all)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeFile(bytes.NewReader(all)); err != nil {
			b.Fatal(err)
		}
	}
}
