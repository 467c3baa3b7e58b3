package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackUndoStrandedUserFileRemoved: the undo moves app/sub/b.txt aside to a journal
// temp name and finds that the move took a file the user saved there (by rename) after the
// check. It moves it back, but the user has meanwhile saved yet another file at b.txt: the
// move back fails (EEXIST) and the undo says the user's file is now at the temp name
// (strandedError). That temp name stays pending in the undo's journal, and the journal's
// end of run removes what is pending: the user's first file is deleted, though the undo
// itself just told the user it is at the temp name.
func TestAttackUndoStrandedUserFileRemoved(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	_, dest, undo := forceRestoreOfA(t, dir)
	sub := filepath.Join(dest, "app/sub")
	b := filepath.Join(sub, "b.txt")
	log := filepath.Join(dir, "strace.log")
	cmd := straceUndo(dir, sub, log, "unlinkat,renameat2", undo, "renameat2:delay_enter=1500000:delay_exit=1500000:when=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool {
		return strings.Contains(c, `renameat2(`) && strings.Contains(c, `, "b.txt"`) && !returned(c)
	})
	// The user saves work at b.txt by rename (first version).
	save := func(content string) {
		tmp := filepath.Join(sub, ".b.txt.swp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, b); err != nil {
			t.Fatal(err)
		}
	}
	save("the user's first version\n")
	// The held move takes it to the temp name; then the user saves again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Lstat(b); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the undo's move never took b.txt")
		}
	}
	save("the user's second version\n")
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	assertContent(t, b, "the user's second version\n")
	ents, _ := os.ReadDir(sub)
	found := false
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if data, err := os.ReadFile(filepath.Join(sub, e.Name())); err == nil && string(data) == "the user's first version\n" {
			found = true
		}
	}
	if !found {
		t.Errorf("the user's first version, which the undo moved to a temp name, is gone from app/sub (holds %q); undo exit %d:\n%s",
			names, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// TestAttackForceXattrsStripsAttributesArchiveNeverRecorded: an archive made without
// --xattrs records no attributes of any file (the manifest cannot tell "none" from "not
// read"). restore --force --xattrs of it into a DEST whose file is already present (same
// bytes, mode, mtime) takes the missing record for "the file had none" and removes the
// file's user.* attributes (and its ACL, and as root with --same-permissions its
// security.selinux label): the restore deletes metadata the archive says nothing about.
func TestAttackForceXattrsStripsAttributesArchiveNeverRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	src := oneFileDated(t, dir, old)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", arch, src), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"src/f": {content: "hi\n"}})
	f := filepath.Join(dest, "src/f")
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(f, "user.keep", []byte("mine"), 0); err != nil {
		t.Skipf("no user xattrs here: %v", err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--xattrs", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(f, "user.keep", buf); err != nil || string(buf[:n]) != "mine" {
		t.Errorf("restore --force --xattrs of an archive made without --xattrs removed user.keep of a present file (%v):\n%s", err, r.stderr)
	}
}

// TestAttackMtimeAfter2262LosesNanoseconds: a file dated after 2262 (beyond UnixNano's range)
// is recorded with its whole seconds (mtime_sec) and its nanoseconds (mtime_nsec), but
// restore sets only the whole seconds: 2300-01-01 00:00:00.5 comes back as 00:00:00.0,
// though the docs promise mtimes exact to the nanosecond.
func TestAttackMtimeAfter2262LosesNanoseconds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	when := time.Unix(10413792000, 500_000_000) // 2300-01-01T00:00:00.5Z
	src := oneFileDated(t, dir, when)
	if got := restoredMtime(t, dir, src); !got.Equal(when) {
		t.Errorf("restored mtime %v, the file had %v", got.UTC(), when.UTC())
	}
}

// TestAttackMtimeBefore1912RestoredAfter2038: a file dated 1902-06-01 (or any date from
// 1901-12-13, the earliest ext4 holds and what it stores for every earlier date, to about
// 1912) is written with the extended timestamp's signed seconds and a DOS date clamped to
// 1980; the reader takes a negative timestamp as unsigned (Go's writer's way) when the DOS
// date is nearer to that, which 2038+ is for these: the file comes back dated 2038.
func TestAttackMtimeBefore1912RestoredAfter2038(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	when := time.Date(1902, 6, 1, 0, 0, 0, 0, time.UTC)
	src := oneFileDated(t, dir, when)
	if got := restoredMtime(t, dir, src); !got.Equal(when) {
		t.Errorf("restored mtime %v, the file had %v", got.UTC(), when)
	}
}

// TestAttackManifestMtimeSecContradictsZipTime: mtime_sec is recorded only where the zip's
// extended timestamp cannot hold a file's seconds (it is then clamped to 2038-01-19 or
// 1901-12-13). A manifest that gives mtime_sec to an entry whose zip time (2020) is not
// clamped contradicts the archive: verify says ok, list --long shows 2020, and restore
// silently dates the file 2128.
func TestAttackManifestMtimeSecContradictsZipTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	when := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	src := oneFileDated(t, dir, when)
	good := filepath.Join(dir, "good.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", good, src), exitComplete)
	bad := filepath.Join(dir, "bad.zip")
	rewriteManifest(t, good, bad, func(m map[string]any) {
		for _, f := range m["files"].([]any) {
			if e := f.(map[string]any); e["path"] == "src/f" {
				e["mtime_sec"] = 5000000000
			}
		}
	})
	v := backup(t, runOpts{dir: dir}, "verify", bad)
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", bad, dest)
	info, err := os.Stat(filepath.Join(dest, "src/f"))
	if v.code == exitComplete && err == nil && !info.ModTime().Equal(when) {
		t.Errorf("verify says ok (%q), and restore (exit %d) dates src/f %v, its zip time %v:\n%s",
			v.stdout, r.code, info.ModTime().UTC(), when, r.stderr)
	}
}

// TestAttackUndoKilledAfterMovingUserFileSweepRemovesIt: the undo moves app/sub/b.txt aside
// to a temp name its journal records; the user saved a file at b.txt (by rename) after the
// check, so the move took the user's file. The undo is killed (SIGKILL, a power cut) before
// it compares and moves it back: the user's file sits at the temp name, and the next restore
// into DEST sweeps the dead run's journal and removes it.
func TestAttackUndoKilledAfterMovingUserFileSweepRemovesIt(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	arch, dest, undo := forceRestoreOfA(t, dir)
	sub := filepath.Join(dest, "app/sub")
	b := filepath.Join(sub, "b.txt")
	log := filepath.Join(dir, "strace.log")
	cmd := straceUndo(dir, sub, log, "unlinkat,renameat2", undo, "renameat2:delay_enter=1000000:delay_exit=5000000:when=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitForCall(t, log, func(c string) bool {
		if strings.Contains(c, `renameat2(`) && strings.Contains(c, `, "b.txt"`) && !returned(c) {
			fmt.Sscan(c, &pid)
			return true
		}
		return false
	})
	if pid <= 0 {
		t.Fatal("no pid in strace's line")
	}
	tmp := filepath.Join(sub, ".b.txt.swp")
	if err := os.WriteFile(tmp, []byte("the user's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, b); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Lstat(b); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the undo's move never took b.txt")
		}
	}
	syscall.Kill(pid, syscall.SIGKILL) // the undo, held by strace after its move
	cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	var before []string
	if ents, err := os.ReadDir(sub); err == nil {
		for _, e := range ents {
			before = append(before, e.Name())
		}
	}
	if len(before) != 1 || !strings.HasPrefix(before[0], ".b.txt.undo-") {
		t.Fatalf("after the kill app/sub holds %q, not the user's file at a temp name alone", before)
	}
	// The next restore into DEST (any: here the archive again, --no-undo).
	backup(t, runOpts{dir: dir}, "restore", "--force", "--no-undo", arch, dest)
	found := false
	ents, _ := os.ReadDir(sub)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if data, err := os.ReadFile(filepath.Join(sub, e.Name())); err == nil && string(data) == "the user's work\n" {
			found = true
		}
	}
	if !found {
		t.Errorf("the user's file, moved aside by the killed undo, was removed by the next restore's sweep (app/sub holds %q)", names)
	}
}

// TestAttackListShowsClampedMtimeAfter2038: a file dated 2100 is recorded with mtime_sec and
// restored dated 2100, but list --json (and --long) give the zip's clamped time,
// 2038-01-19T03:14:07Z: list tells the user another date than the archive holds and
// restore gives.
func TestAttackListShowsClampedMtimeAfter2038(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := oneFileDated(t, dir, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", arch, src), exitComplete)
	r := backup(t, runOpts{dir: dir}, "list", "--json", arch)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, `"2100-01-01T00:00:00Z"`) {
		t.Errorf("list --json of a file dated 2100 does not give 2100-01-01T00:00:00Z:\n%s", r.stdout)
	}
}

// TestAttackXattrsOnFileSystemWithoutThemNeverPresent: restore --force --xattrs of an
// archive recording a user.* attribute into a DEST on a file system that holds none (ramfs:
// ENOTSUP) finds the file already there never the same (its attributes cannot be read, or
// are missing), so each identical restore fixes it up again, warns again, and saves a new
// before-state: a repeated restore never comes to "nothing to write".
func TestAttackXattrsOnFileSystemWithoutThemNeverPresent(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"f": {content: "hi\n"}})
	if err := unix.Setxattr(filepath.Join(src, "f"), "user.x", []byte("1"), 0); err != nil {
		t.Skipf("no user xattrs here: %v", err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--xattrs", "-o", arch, src), exitComplete)
	mnt := filepath.Join(dir, "ramfs")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("ramfs", mnt, "ramfs", 0, ""); err != nil {
		t.Skipf("cannot mount a ramfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dest := filepath.Join(mnt, "dest")
	undo := filepath.Join(dir, "undo")
	if err := os.Mkdir(undo, 0o755); err != nil {
		t.Fatal(err)
	}
	backup(t, runOpts{dir: dir}, "restore", "--force", "--xattrs", "--undo-dir", undo, arch, dest)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--xattrs", "--undo-dir", undo, arch, dest)
	if strings.Contains(r.stderr, "before-state saved") {
		t.Errorf("a second identical restore --force --xattrs into a file system without attributes writes again (exit %d):\n%s", r.code, r.stderr)
	}
}

// TestAttackUndoReportsNotRemovedWhatItRemoved: the undo's unlink of the temp name fails
// (EIO) and so does its move back to b.txt: the temp name stays pending in the journal,
// whose end of run removes it. The undo says b.txt was not removed (exit 3) and that its
// folders are not empty, while b.txt is gone and app/sub is empty: the report and the disk
// disagree.
func TestAttackUndoReportsNotRemovedWhatItRemoved(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	_, dest, undo := forceRestoreOfA(t, dir)
	sub := filepath.Join(dest, "app/sub")
	cmd := straceUndo(dir, sub, os.DevNull, "unlinkat,renameat2", undo, "unlinkat:error=EIO:when=1", "renameat2:error=EIO:when=2")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	_, err := os.Lstat(filepath.Join(sub, "b.txt"))
	ents, _ := os.ReadDir(sub)
	if strings.Contains(stderr.String(), "app/sub/b.txt: created by the restore undone, not removed") && errors.Is(err, os.ErrNotExist) && len(ents) == 0 {
		t.Errorf("the undo says app/sub/b.txt was not removed, but app/sub is empty (exit %d):\n%s", cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// oneFileDated makes dir/src holding the file f ("hi\n") dated when, to the nanosecond
// (os.Chtimes cannot set a time beyond UnixNano's range), and returns src. It skips the test
// where the file system cannot hold when.
func oneFileDated(t *testing.T, dir string, when time.Time) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"f": {content: "hi\n"}})
	f := filepath.Join(src, "f")
	ts := unix.Timespec{Sec: when.Unix(), Nsec: int64(when.Nanosecond())}
	if err := unix.UtimesNano(f, []unix.Timespec{{Nsec: unix.UTIME_OMIT}, ts}); err != nil {
		t.Skipf("this file system cannot hold %v: %v", when, err)
	}
	if info, err := os.Stat(f); err != nil || !info.ModTime().Equal(when) {
		t.Skipf("this file system cannot hold %v: %v", when, err)
	}
	return src
}

// restoredMtime backs up src into dir/a.zip, restores it into dir/dest, and returns the
// mtime of the restored f.
func restoredMtime(t *testing.T, dir, src string) time.Time {
	t.Helper()
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", arch, src), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", arch, dest), exitComplete)
	info, err := os.Stat(filepath.Join(dest, "src/f"))
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}
