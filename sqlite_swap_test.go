package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSQLiteFolderSwappedUnderSQLite: SQLite resolves the /proc/self/fd path it is given
// to a name, and opens the database by that name. A folder swapped for a symlink to another
// folder between the two (held there by strace at SQLite's first open) leads that open to
// another database: the run must not store it. The database is lost, said why.
func TestSQLiteFolderSwappedUnderSQLite(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	user := filepath.Join(dir, "app", "user")
	makeTree(t, user, map[string]node{"a.txt": {content: "a"}})
	secret, out := filepath.Join(dir, "secret"), filepath.Join(dir, "out")
	for _, d := range []string{secret, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, rows := range map[string]int{filepath.Join(user, "state.db"): 3, filepath.Join(secret, "state.db"): 7} {
		db := openSQLite(t, path, "delete")
		addRows(t, db, rows, 10)
		db.Close()
	}
	archive := filepath.Join(out, "app.zip")
	var stderr bytes.Buffer
	// modernc's SQLite opens files with open(2); Go itself uses openat(2).
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=open", "-e", "inject=open:delay_enter=3000000:when=1",
		binary, "create", "-o", archive, "app")
	cmd.Dir, cmd.Stderr = dir, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitFor(t, "the staged snapshot", func() bool { return len(spoolsIn(t, out)) > 0 })
	time.Sleep(500 * time.Millisecond) // SQLite has resolved the path, and waits to open it
	if err := os.Rename(user, user+"2"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, user); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitIncomplete {
		t.Errorf("exit %d, want %d:\n%s", code, exitIncomplete, stderr.String())
	}
	if got := readZip(t, archive)["app/user/state.db"]; got != "" {
		os.WriteFile(filepath.Join(dir, "got.db"), []byte(got), 0o600)
		t.Errorf("the archive holds a database of %d rows as app/user/state.db", checkDB(t, filepath.Join(dir, "got.db")).count)
	}
	rc := readReceipt(t, archive+".receipt.json")
	if got, want := warningsOf(rc), []string{"app/user/state.db snapshot lost=true"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}
