package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRestoreRerunHardLinks: restoring an archive with a hard-link group twice into one
// DEST. The second run found a and b already present (one file, two names) and linked b to
// a again: a rename of a link onto its own file does nothing, so a third name,
// .b.link-TOKEN-1, stayed in DEST for good (the journal that listed it was removed at the
// end of the run), one more on every re-run. A member already linked to the group's file is
// left alone: the re-run writes nothing, not even its journal.
func TestRestoreRerunHardLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "shared\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a"), filepath.Join(dir, "src/app/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	for range 2 {
		r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
		mustExit(t, r, exitComplete)
		if !strings.Contains(r.stderr, "2 files already there") {
			t.Errorf("stderr %q; want both files already there", r.stderr)
		}
	}
	if got := listDir(t, filepath.Join(dest, "app")); len(got) != 2 {
		t.Errorf("DEST/app holds %q, want a and b", got)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dest, "app/a"), &st); err != nil || st.Nlink != 2 {
		t.Errorf("app/a has %d names (%v), want 2", st.Nlink, err)
	}
	if got := listDir(t, dest); len(got) != 1 {
		t.Errorf("DEST holds %q, want app only", got)
	}
}

// TestRestoreLinkGroupNotToOutside: DEST's app/a is a hard link to a file outside DEST with
// the archived content, so a plain restore keeps it as already present (with a warning that
// its metadata are not set in place). The archive's app/b belongs to a's link group: relink
// made b a third name of the outside file, so that what is later written to DEST's b
// changes the file outside. A group is linked only to a member whose names are all in the
// group; b stays a file of its own, with a warning.
func TestRestoreLinkGroupNotToOutside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "shared\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a"), filepath.Join(dir, "src/app/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest, outside := filepath.Join(dir, "dest"), filepath.Join(dir, "outside")
	makeTree(t, outside, map[string]node{"x": {content: "shared\n"}})
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	if err := os.Link(filepath.Join(outside, "x"), filepath.Join(dest, "app/a")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	mustExit(t, r, exitComplete)
	var x, b syscall.Stat_t
	if err := syscall.Stat(filepath.Join(outside, "x"), &x); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(filepath.Join(dest, "app/b"), &b); err != nil {
		t.Fatal(err)
	}
	if b.Ino == x.Ino || x.Nlink != 2 {
		t.Errorf("app/b is the outside file (%d names now); want a file of its own", x.Nlink)
	}
	if !strings.Contains(r.stderr, "warning: app/b: restored as a separate file") {
		t.Errorf("stderr lacks the warning about app/b:\n%s", r.stderr)
	}
}
