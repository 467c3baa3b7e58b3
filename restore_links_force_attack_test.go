package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackForceOverWholeLinkGroupWarnsNothing: the snapshot before an upgrade held
// app/hl1 and app/hl2, two names of one file; the upgrade edited the file (so both names),
// and restore --force put the snapshot back in the original place. It warned, once per
// name, "a hard link (2 names): replaced at this name only; its other names keep the old
// file, and the undo puts it back at this name as a separate copy": false on every count,
// since the restore replaced both names and linked them again, and the before-state holds
// both, which its undo links again. The warning is right only when a name outside what
// the restore replaces (or removes) keeps the old file; here the restore says nothing but
// its summary, and both the restore and its undo leave one file of two names.
func TestAttackForceOverWholeLinkGroupWarnsNothing(t *testing.T) {
	t.Parallel()
	dir, undo := t.TempDir(), t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"hl1": {content: "before\n"}, "other": {content: "x\n"}})
	if err := os.Link(filepath.Join(src, "hl1"), filepath.Join(src, "hl2")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(undo, "snap.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", arch, "app"), exitComplete)
	if err := os.WriteFile(filepath.Join(src, "hl2"), []byte("upgraded\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undo, arch, dir)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stderr, "warning:") {
		t.Errorf("restore --force over both names of a file warned:\n%s", r.stderr)
	}
	assertContent(t, filepath.Join(src, "hl1"), "before\n")
	assertLinkedPair(t, filepath.Join(src, "hl1"), filepath.Join(src, "hl2"))

	u := backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	mustExit(t, u, exitComplete)
	if strings.Contains(u.stderr, "warning:") {
		t.Errorf("the undo of that restore warned:\n%s", u.stderr)
	}
	assertContent(t, filepath.Join(src, "hl1"), "upgraded\n")
	assertLinkedPair(t, filepath.Join(src, "hl1"), filepath.Join(src, "hl2"))
}

// assertLinkedPair fails unless a and b are one file.
func assertLinkedPair(t *testing.T, a, b string) {
	t.Helper()
	ia, err1 := os.Lstat(a)
	ib, err2 := os.Lstat(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("stat: %v %v", err1, err2)
	}
	if !os.SameFile(ia, ib) {
		t.Errorf("%s and %s are no longer one file", a, b)
	}
}
