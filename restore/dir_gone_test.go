package restore

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// removeBeforeThird restores a/x, d/one and d/two into a fresh DEST with one worker; just
// before d/two's unnamed file is made (between two files of d), d is removed (d/one with
// it).
func removeBeforeThird(t *testing.T) (*Result, string) {
	t.Helper()
	dest := t.TempDir()
	entries := []zent{{name: "a/"}, {name: "a/x", body: "x"}, {name: "d/"}, {name: "d/one", body: "1"}, {name: "d/two", body: "2"}}
	defer func(open func(int, uint32) (int, error)) { openUnnamed = open }(openUnnamed)
	real, calls := openUnnamed, 0
	openUnnamed = func(dfd int, perm uint32) (int, error) {
		if calls++; calls == 3 {
			if err := os.RemoveAll(filepath.Join(dest, "d")); err != nil {
				t.Fatal(err)
			}
		}
		return real(dfd, perm)
	}
	_, res := restoreInto(t, buildZip(t, entries, true), dest, Options{Jobs: 1})
	if res == nil {
		t.Fatal("no result")
	}
	if calls < 3 {
		t.Fatalf("%d unnamed files made, want 3", calls)
	}
	return res, dest
}

// moveAfterOne has the restore's link of the file named one followed by a move of the folder
// d to away, between two files of d.
func moveAfterOne(t *testing.T, d, away string) {
	t.Helper()
	link := linkDescriptor
	t.Cleanup(func() { linkDescriptor = link })
	linkDescriptor = func(fd int, _ fileID, dfd int, base string) error {
		err := unix.Linkat(fd, "", dfd, base, unix.AT_EMPTY_PATH)
		if base == "one" {
			if err := os.Rename(d, away); err != nil {
				t.Fatal(err)
			}
		}
		return err
	}
}

// TestRestoreFolderMovedThenRemoved: d is moved out of DEST after d/one (mv DEST/d /tmp/x),
// then removed there (rm -r /tmp/x) before d/two: d/two fails as moved, found by the check
// of its folder before the file is made (attack pass 21 tried it on a worker that skipped
// that check for the folder it had written into last, not kept: the line blamed the file
// system, "create temp file: operation not permitted").
func TestRestoreFolderMovedThenRemoved(t *testing.T) {
	dest, away := t.TempDir(), filepath.Join(t.TempDir(), "away")
	entries := []zent{{name: "d/"}, {name: "d/one", body: "1"}, {name: "d/two", body: "2"}}
	moveAfterOne(t, filepath.Join(dest, "d"), away)
	defer func(open func(int, uint32) (int, error)) { openUnnamed = open }(openUnnamed)
	real, calls := openUnnamed, 0
	openUnnamed = func(dfd int, perm uint32) (int, error) {
		if calls++; calls == 2 { // d/two: only once d was moved, and not checked since
			if err := os.RemoveAll(away); err != nil {
				t.Fatal(err)
			}
		}
		return real(dfd, perm)
	}
	_, res := restoreInto(t, buildZip(t, entries, true), dest, Options{Jobs: 1})
	want := []string{"d/two: d was moved or replaced during the restore", "d/: d was moved or replaced during the restore"}
	if res == nil || res.Files != 1 || !slices.Equal(problemStrings(res.Failed), want) {
		t.Fatalf("result %+v, failed %q, want 1 file and failed %q", res, problemStrings(res.Failed), want)
	}
	if got := listTree(t, dest); len(got) != 0 {
		t.Errorf("DEST holds %q, want nothing", got)
	}
}

// TestRestoreFolderRemovedGuardQuiet: a folder removed in place between two files trips no
// guard (its IN_DELETE_SELF comes only once the restore's descriptor of it is closed), and
// the kernel refuses to make a file in it (EPERM for an unnamed one, ENOENT for a name): the
// file fails as moved or replaced, not as the file system's refusal (attack pass 21; the
// line was "create temp file: operation not permitted").
func TestRestoreFolderRemovedGuardQuiet(t *testing.T) {
	res, _ := removeBeforeThird(t)
	got := problemStrings(res.Failed)
	if !slices.Contains(got, "d/two: d was moved or replaced during the restore") {
		t.Errorf("failed %q, want d/two to fail as moved or replaced", got)
	}
}

// TestRemovedDir: a temp name made in a folder removed while open fails too (ENOENT), and the
// failure is worded as the folder's removal; a folder in place keeps the error as it is.
func TestRemovedDir(t *testing.T) {
	dest := t.TempDir()
	for _, name := range []string{"kept", "gone"} {
		if err := os.Mkdir(filepath.Join(dest, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := unix.Open(filepath.Join(dest, "kept"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(kept)
	gone, err := unix.Open(filepath.Join(dest, "gone"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(gone)
	if err := os.Remove(filepath.Join(dest, "gone")); err != nil {
		t.Fatal(err)
	}
	_, err = unix.Openat(gone, "f", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err == nil {
		t.Fatal("a temp file was made in a removed folder")
	}
	if err := removedDir("gone", gone, err); err.Error() != "gone was moved or replaced during the restore" {
		t.Errorf("removed folder: %v", err)
	}
	if err := removedDir("kept", kept, unix.ENOSPC); err != unix.ENOSPC {
		t.Errorf("folder in place: %v, want ENOSPC as it is", err)
	}
}

// TestRestoreDamagedFileInMovedFolder: d is moved out of DEST after d/one; d/two's data are
// damaged. d/two fails as moved: its folder is checked before its data are read, so the
// restore is "incomplete", not "failed" (attack pass 21: a worker that skipped the check
// for the folder it had written into last reported the damage instead; not kept).
func TestRestoreDamagedFileInMovedFolder(t *testing.T) {
	dest, away := t.TempDir(), filepath.Join(t.TempDir(), "away")
	entries := []zent{{name: "d/"}, {name: "d/one", body: "1"}, {name: "d/two", body: "TWOTWOTWO", store: true}}
	data := buildZip(t, entries, true)
	i := bytes.Index(data, []byte("TWOTWOTWO"))
	data[i] ^= 1
	moveAfterOne(t, filepath.Join(dest, "d"), away)
	_, res := restoreInto(t, data, dest, Options{Jobs: 1})
	want := []string{"d/two: d was moved or replaced during the restore", "d/: d was moved or replaced during the restore"}
	if res == nil || len(res.Damaged) != 0 || !slices.Equal(problemStrings(res.Failed), want) {
		t.Fatalf("damaged %q, failed %q; want none damaged and failed %q", problemStrings(res.Damaged), problemStrings(res.Failed), want)
	}
}

// TestRestoreFolderRemovedBeforeLink: d is removed in place after d/two's data are written
// and before its unnamed file is linked, while the guard is quiet (a removal queues no event
// while the restore holds the folder open). The check before the link does not ask about
// that removal; the kernel refuses the link (ENOENT), and d/two fails as moved or replaced,
// not as the link's error.
func TestRestoreFolderRemovedBeforeLink(t *testing.T) {
	dest := t.TempDir()
	entries := []zent{{name: "d/"}, {name: "d/one", body: "1"}, {name: "d/two", body: "2"}}
	link := linkDescriptor
	t.Cleanup(func() { linkDescriptor = link })
	linkDescriptor = func(fd int, made fileID, dfd int, base string) error {
		if base == "two" {
			if err := os.RemoveAll(filepath.Join(dest, "d")); err != nil {
				t.Fatal(err)
			}
		}
		return link(fd, made, dfd, base)
	}
	_, res := restoreInto(t, buildZip(t, entries, true), dest, Options{Jobs: 1})
	if res == nil || !slices.Contains(problemStrings(res.Failed), "d/two: d was moved or replaced during the restore") {
		t.Fatalf("result %+v, failed %q, want d/two to fail as moved or replaced", res, problemStrings(res.Failed))
	}
	if got := listTree(t, dest); len(got) != 0 {
		t.Errorf("DEST holds %q, want nothing", got)
	}
}
