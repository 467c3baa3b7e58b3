package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetLockStatEIOSaysAnotherRun: a set run holds .backup.lock, and its guard checks
// at once (lstat) that the name still leads to the file it locked. That lstat fails (EIO,
// the second lstat of the lock's path, the first being Lock's own check). The guard took
// "cannot tell" for "replaced", opened the name again, found the file locked (by this run's
// own flock) and said, even with -q: "was replaced while this run held the set, and another
// process locked the new file", a claim of two runs in one set when there was one; and the
// guard then stopped watching the name.
// Correct: the file the name leads to is this run's own: nothing to say.
func TestAttackSetLockStatEIOSaysAnotherRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	r := straceRun(t, dir, filepath.Join(set, ".backup.lock"), "newfstatat", "newfstatat:error=EIO:when=2",
		"create", "-q", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stderr, "another process") {
		t.Errorf("one run in the set, an lstat of its lock failed (EIO), and create says:\n%s", r.stderr)
	}
}

// TestAttackUndoCreatedStatEIOSaysComplete: restore --force into an empty DEST creates
// app/sub/b.txt, and its before-state lists it as created; the undo lstats it to know
// whether it is there to remove, and that lstat fails (EIO, every lstat of b.txt). The undo
// took the failed lstat for "not there": it exited 0, "complete", with b.txt left in DEST and
// no word of it but a warning that app/sub "is not empty", as if the user had put a file
// there.
// Correct: a created path that cannot be checked is not skipped: the undo removes it as one
// that is there (it opens and reads it, which works), or says the error and does not exit 0.
func TestAttackUndoCreatedStatEIOSaysComplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, dest, undo := forceRestoreOfA(t, dir)
	r := straceRun(t, dir, "b.txt", "newfstatat", "newfstatat:error=EIO:when=1+", undo...)
	left := exists(filepath.Join(dest, "app/sub/b.txt"))
	if r.code == exitComplete && left {
		t.Errorf("the undo could not lstat app/sub/b.txt (EIO), left it, and exits 0:\n%s", r.stderr)
	}
	if r.code != exitComplete && (!strings.Contains(r.stderr, "app/sub/b.txt") || !strings.Contains(r.stderr, "input/output error")) {
		t.Errorf("the undo could not lstat app/sub/b.txt (EIO): exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
