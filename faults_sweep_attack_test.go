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
