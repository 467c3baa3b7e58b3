package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreLockHolderWritesBelowDest: root's DEST (/srv, 0755) holds app, a folder
// nobody owns. nobody's `restore app.zip /srv` locks /srv and writes into /srv/app. Root's
// `restore --force app.zip /srv` at once took the holder for a mere reader ("locked by pid N
// (uid 65534), which cannot write into it: ignored"), since nobody may not write into /srv
// itself, and ran alongside: by hand (nobody's restore held by strace at its linkat), nobody's
// ended exit 3 (f2 "appeared in the destination during the restore", f3-f5 "permission
// denied", data/ chmod refused), root's exit 0, its before-state holding nobody's
// half-restored f1 as the user's. Here nobody's restore is a flock held on /srv while
// nobody may write into /srv/app: root's restore exited 0 with the warning and replaced
// app/a.
// Correct: a holder that may write into a folder of DEST the restore passes through is a
// writer, its lock respected: exit 4, `another restore is writing into it`, nothing written.
func TestAttackRestoreLockHolderWritesBelowDest(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	f, st := readableLockFixture(t)
	if err := os.Chown(filepath.Join(f.dest, "app"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	holder := holdAsNobody(t, st.Ino, "flock", f.dest, "sleep", "60")
	defer killGroup(holder)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitLocked || !strings.Contains(r.stderr, "another restore is writing into it") || strings.Contains(r.stderr, "ignored") {
		t.Errorf("restore while nobody, who may write into DEST/app, holds DEST: exit %d, stderr %q; want 4, locked, and no word of the lock ignored", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(f.dest, "app/a"), "user's a\n")
}
