package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetsCallsUnreadableSetDamaged: a monitoring account that is not root ran backup
// sets over root's sets, whose archives and receipts are 0600 as create makes them. Each set
// was listed "damaged" (its stderr line said "permission denied"), a verdict on the backups
// that account cannot read: the page said the backups were broken when they were only
// another user's. Such a set is "unreadable", still unhealthy (exit 1): nothing is known of
// it. A set whose LATEST is damaged stays "damaged", whoever asks.
func TestAttackSetsCallsUnreadableSetDamaged(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	root, src := sharedTempDir(t), t.TempDir()
	makeTree(t, filepath.Join(src, "app"), map[string]node{"a": {content: "a\n"}})
	for _, name := range []string{"good", "bad"} {
		mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--output-dir", filepath.Join(root, name), "app"), exitComplete)
	}
	if err := os.WriteFile(filepath.Join(root, "bad", "LATEST"), []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := backup(t, runOpts{uid: nobody}, "sets", root)
	mustExit(t, r, exitFailed)
	want := "damaged " + filepath.Join(root, "bad") + "\nunreadable " + filepath.Join(root, "good")
	if got := strings.Join(setsColumn(r.stdout), "\n"); got != want {
		t.Errorf("sets as nobody:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(r.stderr, "permission denied") {
		t.Errorf("stderr %q; want the cause of the unreadable set", r.stderr)
	}
	r = backup(t, runOpts{uid: nobody}, "sets", "--json", root)
	var rows []struct{ Set, Health string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 || rows[1].Health != "unreadable" {
		t.Errorf("sets --json as nobody: %s (%v); want the good set unreadable", r.stdout, err)
	}

	r = backup(t, runOpts{}, "sets", root)
	want = "damaged " + filepath.Join(root, "bad") + "\nok " + filepath.Join(root, "good")
	if got := strings.Join(setsColumn(r.stdout), "\n"); got != want {
		t.Errorf("sets as root:\n%s\nwant\n%s", got, want)
	}
}
