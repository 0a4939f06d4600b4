// Package repo holds no code for the programs: it is the home of the tests that check the
// repository as a whole (go test ./internal/repo/): that it stands alone — no tracked file
// depends on anything outside the repository —, that every relative link and anchor of its
// Markdown resolves, and that it speaks of what the code does, not of the issues and work
// sessions that produced it.
package repo
