package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreLinkGroupAfterLaterMember: the snapshot holds app/hl1 and app/hl2, two
// names of one file. The user first restored app/hl2 alone (--include), then everything. The
// second restore wrote app/hl1 as a new file and warned "app/hl2: restored as a separate
// file, not a hard link of app/hl1: it was there already as a file of its own, and is left as
// it is", exit 0 with the two names two files. Restored in the other order (app/hl1 first)
// the same two restores link app/hl2 to the kept app/hl1, silently: a kept member may be
// linked to (its names are all the group's), it is only never replaced by a link. So the
// group's file is the kept member whatever its place in the archive: both orders end with
// one file of two names, and no warning.
func TestAttackRestoreLinkGroupAfterLaterMember(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"hl1": {content: "linked\n"}, "other": {content: "x\n"}})
	if err := os.Link(filepath.Join(src, "hl1"), filepath.Join(src, "hl2")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "snap.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)

	for _, first := range []string{"app/hl1", "app/hl2"} {
		dest := filepath.Join(dir, "r-"+filepath.Base(first))
		mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--include", first, arch, dest), exitComplete)
		r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
		mustExit(t, r, exitComplete)
		if strings.Contains(r.stderr, "warning") || strings.Contains(r.stderr, "separate file") {
			t.Errorf("restore after --include %s warned:\n%s", first, r.stderr)
		}
		assertLinkedPair(t, filepath.Join(dest, "app/hl1"), filepath.Join(dest, "app/hl2"))
		assertContent(t, filepath.Join(dest, "app/hl1"), "linked\n")
	}
}
