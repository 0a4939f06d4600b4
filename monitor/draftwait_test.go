package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TRENZINHO_DRAFT_VERIFICATION_WAIT is a positive duration no shorter than the settle, refused at
// start otherwise, before anything is created.
func TestDraftVerificationWaitIsValidated(t *testing.T) {
	for _, tc := range []struct {
		settle, wait time.Duration
		bad          string
	}{
		{150 * time.Second, 24 * time.Hour, ""},
		{150 * time.Second, 150 * time.Second, ""},
		{2 * time.Second, 150 * time.Second, ""},
		{150 * time.Second, 149 * time.Second, "TRENZINHO_DRAFT_VERIFICATION_WAIT"},
		{150 * time.Second, 0, "TRENZINHO_DRAFT_VERIFICATION_WAIT"},
		{150 * time.Second, -time.Hour, "TRENZINHO_DRAFT_VERIFICATION_WAIT"},
		{0, time.Hour, "TRENZINHO_DRAFT_SETTLE"},
	} {
		err := checkDraftWaits(tc.settle, tc.wait)
		if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.bad)) {
			t.Errorf("settle %v, wait %v: %v, want %q", tc.settle, tc.wait, err, tc.bad)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Setenv("TRENZINHO_DRAFT_VERIFICATION_WAIT", "1m")
	err := cmdServe(ctx, []string{"--db", t.TempDir() + "/m.db", "--listen", "127.0.0.1:0",
		"--admin-user", "admin", "--admin-password", "a long enough password"})
	if err == nil || !strings.Contains(err.Error(), "TRENZINHO_DRAFT_VERIFICATION_WAIT") {
		t.Errorf("serve with a wait shorter than the settle: %v", err)
	}
}
