package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackFolderAttributeWarningsDropped: a folder's attributes are set at the end
// (setDirTimes, after relink), but the restore's warnings were copied into the result by
// relink before that: every warning a folder's attributes give is dropped. Here app/d and
// app/d/f both carry trusted.note and the restore runs as root with --xattrs but without
// --same-permissions: docs/restore.md says each such attribute is "a warning (... not set:
// only with --same-permissions, as root, with the recorded owner) ... one line per
// attribute, on stderr and in --json's warnings". The file's is there; the folder's is
// missing from both, and the attribute is not set. The same silence hides a user's lost
// user.* on a folder (see TestAttackXattrsACLThenUserReadOnlyAsUser), which the change's new
// attribute order was meant to fix.
// Correct: --json's warnings (and stderr) name app/d/ as well as app/d/f.
func TestAttackFolderAttributeWarningsDropped(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/d/f": {content: "x\n"}})
	for _, p := range []string{"app/d", "app/d/f"} {
		if err := unix.Setxattr(filepath.Join(src, p), "trusted.note", []byte("t"), 0); err != nil {
			t.Skipf("trusted xattrs not supported here: %v", err)
		}
	}
	zip := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: src}, "create", "--xattrs", "-o", zip, "app"), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--xattrs", "--json", zip, filepath.Join(dir, "dest"))
	mustExit(t, r, exitComplete)
	var got struct {
		Warnings []struct {
			Entry string `json:"entry"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	warned := map[string]bool{}
	for _, w := range got.Warnings {
		warned[w.Entry] = true
	}
	if !warned["app/d/f"] {
		t.Fatalf("no warning for the file's trusted.note either: %s", r.stdout)
	}
	if !warned["app/d/"] && !warned["app/d"] {
		t.Errorf("the folder's trusted.note was not set, with no warning (the file's is there); --json:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}
