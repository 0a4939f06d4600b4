// Package repo holds no code for the programs: it is the home of the tests that check the
// repository as a whole (go test ./internal/repo/), such as that it stands alone — that no tracked
// file depends on anything outside the repository.
package repo
