package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// folderState lists dir and everything in it (not below) as "NAME ino mtime ctime": what a
// run that only reads must leave as it found it.
func folderState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, name := range append([]string{"."}, listDir(t, dir)...) {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, name), &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s ino=%d mtime=%d ctime=%d size=%d", name, st.Ino, st.Mtim.Nano(), st.Ctim.Nano(), st.Size))
	}
	return out
}

// createOnlyReads backs up dir/app into dir/b.zip as root, and fails the test unless the run
// left app and everything in it as it found it (folderState), said complete, and the
// database at db (below dir, as restored) holds rows rows. It returns the archive.
func createOnlyReads(t *testing.T, dir, db string, rows int) string {
	t.Helper()
	app := filepath.Join(dir, "app")
	before := folderState(t, app)
	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	if after := folderState(t, app); !slices.Equal(after, before) {
		t.Errorf("the folder changed:\n%s\nwas:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	mustExit(t, r, exitComplete)
	if got := checkDB(t, filepath.Join(restoreTo(t, archive), db)); got.count != rows {
		t.Errorf("the restored database holds %d rows, want the %d committed", got.count, rows)
	}
	return archive
}

// alicesFile makes dir/alice/shared holding content: another user's file (uid 1000) outside
// the tree, that anyone may write (mode 0666), so that the kernel's protected_hardlinks lets
// nobody link to it. It returns its path.
func alicesFile(t *testing.T, dir, content string) string {
	t.Helper()
	alice := filepath.Join(dir, "alice")
	makeTree(t, alice, map[string]node{"shared": {content: content, mode: 0o666}})
	shared := filepath.Join(alice, "shared")
	if err := os.Chown(shared, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	return shared
}

// linkAsNobody makes link, as nobody, a hard link to target.
func linkAsNobody(t *testing.T, target, link string) {
	t.Helper()
	ln := exec.Command("ln", target, link)
	ln.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := ln.CombinedOutput(); err != nil {
		t.Fatalf("nobody's hard link: %v %s", err, out)
	}
}

// lineAbout returns the last line of stderr that names path ("" when none does): the one
// line a run says about a file it lost.
func lineAbout(stderr, path string) string {
	var line string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, path) {
			line = l
		}
	}
	return line
}
