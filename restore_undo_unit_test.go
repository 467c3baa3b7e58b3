package main

import (
	"context"
	"path/filepath"
	"testing"

	"backup/restore"
)

func TestBeforeStateName(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, tt := range []struct{ dest, want string }{
		{"/srv/www", "www-before-restore"},
		{"/srv/www/", "www-before-restore"},
		{"/", "root-before-restore"},
		{"rel/dest", "dest-before-restore"},
		{".", filepath.Base(cwd) + "-before-restore"},
	} {
		t.Run(tt.dest, func(t *testing.T) {
			if got := beforeStateName(tt.dest); got != tt.want {
				t.Errorf("beforeStateName(%q) = %q, want %q", tt.dest, got, tt.want)
			}
		})
	}
}

// TestRestoreOutcomeLateInterrupt: a restore that did everything before an interrupt came is
// complete; one the interrupt stopped is interrupted. Once, a SIGINT at the very end turned a
// whole restore into "interrupted" (exit 130).
func TestRestoreOutcomeLateInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got := restoreOutcome(ctx, &restore.Result{Files: 3}, nil); got != restoreComplete {
		t.Errorf("everything done, then interrupted: %s, want %s", got, restoreComplete)
	}
	if got := restoreOutcome(ctx, &restore.Result{Files: 1}, ctx.Err()); got != restoreInterrupted {
		t.Errorf("stopped by the interrupt: %s, want %s", got, restoreInterrupted)
	}
}
