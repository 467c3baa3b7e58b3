package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestorePresentFixFailedCountedKept: DEST holds app/f with the archive's bytes
// but another mode, in a file root owns; a restore run by another user (nobody) keeps the
// file and tries to give it its recorded mode, which the kernel refuses (chmod: EPERM, not
// the owner). The summary said both "app/f: chmod: operation not permitted (not restored)"
// and "1 file already there" (already_present 1 in --json): one file counted as kept with
// what the archive records and as not restored.
// Correct: a file whose fix failed is counted once, as failed; "already there" counts the
// files DEST holds as the archive records them.
func TestAttackRestorePresentFixFailedCountedKept(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "f\n"}, "g": {content: "g\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	os.Chmod(arch, 0o644)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	for _, d := range []string{dest, filepath.Join(dest, "app")} {
		if err := os.Chown(d, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(filepath.Join(dest, "app/g"), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dest, "app/f"), 0o604); err != nil { // root's, another mode, readable by all
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--json", arch, dest)
	out := restoreJSONOf(t, r)
	if r.code != exitIncomplete || len(out.Failed) != 1 || out.Failed[0].Entry != "app/f" || !strings.Contains(out.Failed[0].Reason, "operation not permitted") {
		t.Fatalf("exit %d, failed %v; want 3 and app/f's chmod refused\n%s", r.code, out.Failed, r.stderr)
	}
	if out.AlreadyPresent != 1 {
		t.Errorf("already_present %d, want 1 (app/g; app/f failed):\n%s", out.AlreadyPresent, r.stdout)
	}
}
