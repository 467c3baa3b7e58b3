package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackUndoFullDiskPutsNothingBack: DEST is a 256 KiB tmpfs holding app/f1 (100 KB of
// the user's). restore --force replaces it with the archive's app/f1 (10 KB) and creates
// app/f2 (225 KB): complete, DEST nearly full. The printed undo wrote the user's app/f1
// back first and removed app/f2 only after: the temp file of f1 found no room ("app/f1:
// write .f1.restore-…: no space left on device"), exit 1, nothing put back and app/f2 left;
// and so did every run of it again. The undo of a restore that filled the disk could never
// undo it without the user deleting the restore's files by hand.
// Correct: the undo removes the paths the restore created first (that only frees room),
// then puts back what it replaced: exit 0, DEST as it was.
func TestAttackUndoFullDiskPutsNothingBack(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"f1": {content: randomString(t, 10_000)}, "f2": {content: randomString(t, 225_000)}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	mountTmpfs(t, dest, "256k")
	mine := randomString(t, 100_000)
	makeTree(t, dest, map[string]node{"app/f1": {content: mine}})

	r := backup(t, runOpts{dir: dir}, "restore", "--force", "-j1", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	r = backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	if r.code != exitComplete {
		t.Errorf("the undo: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "app/f1")); string(got) != mine {
		t.Errorf("app/f1 holds %d bytes, not the user's %d put back", len(got), len(mine))
	}
	if exists(filepath.Join(dest, "app/f2")) {
		t.Errorf("app/f2, which the restore created, is still in DEST")
	}
}

// TestAttackUndoFailedRemovalBlamesUser: restore --force replaced app/f1 (the user's) and
// created app/h1, a hard link of the restored f1. Its undo removes h1 first (moved aside,
// then unlinked), and that unlink fails (EIO): h1 is moved back, and listed as not removed.
// The two renames moved f1's ctime (one file), which the undo then took for someone's
// change: "app/f1: was changed or replaced in the destination during the restore", and the
// user's f1 was not put back, though nobody but the undo had touched it.
// Correct: the move aside and back is the undo's own change; f1 is put back, and only h1 is
// listed (exit 3).
func TestAttackUndoFailedRemovalBlamesUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f1": {content: "new\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/f1"), filepath.Join(dir, "src/app/h1")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f1": {content: "mine\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	r = straceRun(t, dir, filepath.Join(dest, "app"), "unlinkat", "unlinkat:error=EIO:when=1", printedUndo(t, r.stderr)...)
	if !strings.Contains(r.stderr, "app/h1: created by the restore undone, not removed: input/output error") {
		t.Fatalf("the test needs the unlink of h1's aside name to fail; exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if r.code != exitIncomplete || strings.Contains(r.stderr, "changed or replaced") {
		t.Errorf("exit %d, want 3 with h1 alone not done; stderr:\n%s", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/f1"), "mine\n")
}

// TestAttackUndoDiskFullCannotRemove: as TestAttackUndoFullDiskPutsNothingBack, but the
// disk is full to the last page (a file of the user's filled it after the restore). The
// undo's removal of app/f2, the restore's 150 KB, which only frees room, first recorded the
// aside name it moves the file to in its journal in DEST, whose write failed: "app/f2:
// created by the restore undone, not removed: write .backup-restore-….journal: … no space
// left on device", then app/f1 too: exit 1, nothing undone, and so on every run again. An
// aside name is never removed by a journal's sweep (docs/restore.md): the record served
// nothing.
// Correct: the removal needs no room; app/f2 goes, and app/f1 is put back in the room it
// frees: exit 0.
func TestAttackUndoDiskFullCannotRemove(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"f1": {content: randomString(t, 10_000)}, "f2": {content: randomString(t, 150_000)}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	mountTmpfs(t, dest, "256k")
	mine := randomString(t, 100_000)
	makeTree(t, dest, map[string]node{"app/f1": {content: mine}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "-j1", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	fill(t, filepath.Join(dest, "filler"))
	r = backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	if r.code != exitComplete {
		t.Errorf("the undo: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "app/f1")); string(got) != mine {
		t.Errorf("app/f1 holds %d bytes, not the user's %d put back", len(got), len(mine))
	}
	if exists(filepath.Join(dest, "app/f2")) {
		t.Errorf("app/f2, which the restore created, is still in DEST")
	}
}

// fill writes zeros to a new file at path until its file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for buf := make([]byte, 4096); ; {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

// TestAttackRestoreFullJournalSaysTwice: restore --force into a DEST whose disk is full: its
// journal's header cannot be written, and the one line said the journal twice, "app/f1:
// write .backup-restore-….journal: write .backup-restore-….journal: no space left on
// device": the file's own error, which names the step and the file, wrapped in the same
// words again.
// Correct: the step and the journal once.
func TestAttackRestoreFullJournalSaysTwice(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f1": {content: "new\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	mountTmpfs(t, dest, "64k")
	makeTree(t, dest, map[string]node{"app/f1": {content: "mine\n"}})
	fill(t, filepath.Join(dest, "filler"))
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, ".journal: no space left on device") || strings.Count(r.stderr, ".journal") != 1 {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// TestAttackUndoWarnsSplitOfRemovedLink: restore --force replaced app/f1 (the user's) and
// created app/h1, a hard link of the restored f1. Its undo warned "app/f1: a hard link (2
// names): replaced at this name only; its other names keep the old file", while the other
// name is h1, which this same undo removes: after it, f1 is the user's file and no name
// keeps anything.
// Correct: no such warning when every other name of the file is one the undo removes.
func TestAttackUndoWarnsSplitOfRemovedLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f1": {content: "new\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/f1"), filepath.Join(dir, "src/app/h1")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f1": {content: "mine\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	r = backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stderr, "a hard link") || exists(filepath.Join(dest, "app/h1")) {
		t.Errorf("the undo removed h1, f1's other name, and says:\n%s", r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/f1"), "mine\n")
}
