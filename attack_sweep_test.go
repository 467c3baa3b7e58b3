package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSweepFolderFstatEIOSaysMoved: a restore into an empty DEST opens app, and
// before each file checks that the folder is still there (an fstat of the folder it holds
// open, while the move guard saw nothing). That fstat fails (EIO, the 2nd or 3rd fstat of
// app's descriptor). The restore said "app/b: app was moved or replaced during the restore
// (not restored)", exit 3: an I/O error told as someone's swap, and the error itself nowhere.
// Correct: as for the lstat of the same check (764f222), a check that cannot be made fails
// the entry with that error ("app: fstat: input/output error"), which says nothing of a move.
func TestAttackSweepFolderFstatEIOSaysMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}, "b": {content: "b\n"}, "sub/c": {content: "c\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	for k := 1; k <= 4; k++ {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d", k))
		r := straceRun(t, dir, filepath.Join(dest, "app"), "fstat", fmt.Sprintf("fstat:error=EIO:when=%d", k),
			"restore", "a.zip", dest)
		if strings.Contains(r.stderr, "moved or replaced") {
			t.Errorf("fstat %d of app failed (EIO), nothing moved, and restore says (exit %d):\n%s", k, r.code, r.stderr)
		}
		if r.code != exitComplete && !strings.Contains(r.stderr, "input/output error") {
			t.Errorf("fstat %d of app failed (EIO): exit %d without the error:\n%s", k, r.code, r.stderr)
		}
	}
}
