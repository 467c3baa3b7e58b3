package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestSQLiteFIFOSidecar: a FIFO where a database's -journal or -wal would be (SQLite opens
// them by name, and blocking) never hangs the run: the database is lost, said why, and the
// rest is archived.
func TestSQLiteFIFOSidecar(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ mode, sidecar string }{{"delete", "-journal"}, {"wal", "-wal"}, {"wal", "-shm"}} {
		t.Run(tt.sidecar, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			app := filepath.Join(dir, "app")
			makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
			db := openSQLite(t, filepath.Join(app, "state.db"), tt.mode)
			addRows(t, db, 3, 10)
			db.Close()
			if err := syscall.Mkfifo(filepath.Join(app, "state.db"+tt.sidecar), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			archive := filepath.Join(dir, "app.zip")
			var stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, binary, "create", "-o", archive, "app")
			cmd.Dir, cmd.Stderr = dir, &stderr
			cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("the run hung on the FIFO %s:\n%s", tt.sidecar, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != exitIncomplete {
				t.Fatalf("exit %d, want %d:\n%s", code, exitIncomplete, stderr.String())
			}
			rc := readReceipt(t, archive+".receipt.json")
			if got, want := warningsOf(rc), []string{"app/state.db snapshot lost=true"}; !slices.Equal(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
		})
	}
}
