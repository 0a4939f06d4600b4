// Package e2e holds the end-to-end tests of the whole pipeline: simulated instruments writing
// into pseudo-terminals, the bridge reading them through its real serial code and publishing
// to a real Mosquitto, and the monitor and ingest consuming from it.
package e2e
