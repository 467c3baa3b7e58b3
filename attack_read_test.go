package main

import (
	"archive/zip"
	"bytes"
	bin "encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackUndoRemovesFileReplacedAfterItsCheck: the undo of a restore removes the files that
// restore created only while they hold what it wrote (size and SHA-256). It reads app/sub/b.txt,
// finds the restore's bytes, and then unlinks the name: a file the user put at that name
// between the check and the unlink (here while strace holds the unlinkat) is removed, with
// exit 0, no warning, and in no before-state (the undo's own before-state saved the file
// the plan saw). The docs: "only those that still hold what the restore wrote ... Anything
// else (a file edited since ...) stays where it is, with a warning".
func TestAttackUndoRemovesFileReplacedAfterItsCheck(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	_, dest, undo := forceRestoreOfA(t, dir)
	sub := filepath.Join(dest, "app/sub")
	log := filepath.Join(dir, "strace.log")
	// The undo moves the name aside to check what it took before it removes it: that
	// first move (its removal, before the fix) is held.
	cmd := straceUndo(dir, sub, log, "unlinkat,renameat2", undo, "unlinkat,renameat2:delay_enter=1500000:when=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool {
		return (strings.Contains(c, `unlinkat(`) || strings.Contains(c, `renameat2(`)) && strings.Contains(c, `, "b.txt"`) && !returned(c)
	})
	// The user saves new work at app/sub/b.txt (by rename, as editors do).
	tmp := filepath.Join(sub, ".b.txt.swp")
	if err := os.WriteFile(tmp, []byte("the user's new work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(sub, "b.txt")); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(sub, "b.txt")); err != nil {
		t.Errorf("app/sub/b.txt, the user's new work put there during the undo, is gone (%v); undo exit %d:\n%s",
			err, cmd.ProcessState.ExitCode(), stderr.String())
	} else {
		assertContent(t, filepath.Join(sub, "b.txt"), "the user's new work\n")
	}
}

// TestAttackUndoSplitsHardLink: DEST holds app/sub/b.txt and app/sub/c, two names of one
// file; the archive holds app/sub/b.txt only. restore --force replaces b.txt (c keeps the old
// file), and its undo, run as printed, writes b.txt back as a new file: b.txt and c are
// no longer one file (editing one no longer changes the other). The before-state knows no
// other name of a file (finding them would take a walk of DEST), so the restore says so when
// it replaces such a file: a warning, not silence.
func TestAttackUndoSplitsHardLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "alpha\n"}, "sub/b.txt": {content: "mine\n"}})
	b, c := filepath.Join(dest, "app/sub/b.txt"), filepath.Join(dest, "app/sub/c")
	if err := os.Link(b, c); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	want := "app/sub/b.txt: a hard link (2 names): replaced at this name only; its other names keep the old file, and the undo puts it back at this name as a separate copy"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("restore --force of a file of two names: no warning %q:\n%s", want, r.stderr)
	}
	assertContent(t, c, "mine\n")
	u := backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	mustExit(t, u, exitComplete)
	assertContent(t, b, "mine\n")
	assertContent(t, c, "mine\n")
}

// TestAttackPrintedUndoOfPlainForceLosesSetuid: as root, a plain restore --force (no
// --same-permissions) replaces app/a.txt, root's setuid program (04755). The before-state
// records 04755, but the printed undo ("backup restore --force --xattrs BEFORE DEST") has
// no --same-permissions, so the program comes back 0755: the undo does not put back what
// was there. The attributes are put back whatever the restore's flags (--xattrs is always
// printed, as the before-state always holds them); the setuid bit, which the before-state
// holds as well, is not.
func TestAttackPrintedUndoOfPlainForceLosesSetuid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	f := filepath.Join(dest, "app/a.txt")
	if err := syscall.Chmod(f, 0o4755); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	line := printedUndo(t, r.stderr)
	mustExit(t, backup(t, runOpts{dir: dir}, line...), exitComplete)
	assertContent(t, f, "mine\n")
	var st syscall.Stat_t
	syscall.Stat(f, &st)
	if st.Mode&0o7777 != 0o4755 {
		t.Errorf("after the printed undo (backup %s) app/a.txt has mode %o, was 4755", strings.Join(line, " "), st.Mode&0o7777)
	}
}

// TestAttackCreatedNamesAnEntry: an archive whose manifest's "created" list (what a
// before-state's undo removes) names one of the archive's own files, app/a.txt, with its
// size and SHA-256. verify passes it; restore --force into a DEST that holds app/a.txt
// already keeps it as present and then removes it as "created by the restore undone", and
// says complete (exit 0): the archive's file is not in DEST, yet the restore reports
// everything restored. Such a manifest is self-contradictory (a path both put back and
// removed) and should be refused by restore (and reported by verify), as a name stored
// twice is.
func TestAttackCreatedNamesAnEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	rewriteManifest(t, arch, hostile, func(m map[string]any) {
		for _, f := range manifestFiles(t, m) {
			if f["path"] == "app/a.txt" {
				m["created"] = []any{map[string]any{"path": "app/a.txt", "type": "file", "size": f["size"], "sha256": f["sha256"]}}
			}
		}
	})
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, hostile, dest)
	_, err := os.Lstat(filepath.Join(dest, "app/a.txt"))
	if r.code == exitComplete && err != nil {
		t.Errorf("restore --force exit 0 (%q) but app/a.txt, a file of the archive, is not in DEST: %v", strings.TrimSpace(r.stderr), err)
	}
	if v := backup(t, runOpts{dir: dir}, "verify", hostile); v.code == exitComplete {
		t.Errorf("verify passes an archive whose manifest lists its own file app/a.txt as created (to be removed): %q", v.stdout)
	}
}

// TestAttackUndoRemovalErrorSaysComplete: the undo of a restore that created app/a.txt and
// app/sub/b.txt fails to remove one of them (strace fails its first unlinkat with EIO): a
// file the restore wrote stays in DEST (at its name or at the undo's aside name), and the
// undo said "complete", exit 0, as if it had undone everything, with only a warning. A
// removal the kernel refused is not "a file edited since" (which stays on purpose); like a
// file that could not be written it is an entry that failed: exit 3, listed, status
// incomplete.
func TestAttackUndoRemovalErrorSaysComplete(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	_, dest, undo := forceRestoreOfA(t, dir)
	cmd := straceUndo(dir, filepath.Join(dest, "app"), os.DevNull, "unlinkat", undo, "unlinkat:error=EIO:when=1")
	out, _ := cmd.CombinedOutput()
	var left []string
	filepath.WalkDir(dest, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			left = append(left, path)
		}
		return nil
	})
	if len(left) == 0 {
		t.Fatalf("the undo removed every file despite the EIO (did the fault hit?):\n%s", out)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitIncomplete || strings.Contains(string(out), "restore: complete") {
		t.Errorf("the undo could not remove %q (EIO), still in DEST, yet exit %d, want %d:\n%s", left, code, exitIncomplete, out)
	}
}

// TestAttackUndoLeavesAddedXattrsAndACL: DEST holds app/a.txt with the archived bytes, mode
// 0600 and no extended attributes; the archive (create --xattrs) records a user.* attribute
// and an ACL granting uid 65534 read-write. restore --force --xattrs keeps the file as
// present and gives it, in place, the archived mode, the attribute and the ACL; its
// before-state records the file's old mode and its attributes (none). The printed undo puts
// the mode and mtime back but leaves the attribute and the ACL entry for uid 65534: the undo
// does not put back what was there (and the ACL entry, masked by mode 0600, grants uid 65534
// read-write again as soon as the owner runs chmod g+rw).
func TestAttackUndoLeavesAddedXattrsAndACL(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfattr")
	mustTool(t, "setfacl")
	mustTool(t, "getfattr")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}})
	src := filepath.Join(dir, "src/app/a.txt")
	if out, err := exec.Command("setfattr", "-n", "user.note", "-v", "archived", src).CombinedOutput(); err != nil {
		t.Skipf("setfattr: %v %s", err, out)
	}
	if out, err := exec.Command("setfacl", "-m", "u:65534:rw", src).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	arch := filepath.Join(dir, "x.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--xattrs", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "alpha\n", mode: 0o600}})
	f := filepath.Join(dest, "app/a.txt")
	before, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output()
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--xattrs", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	if got, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output(); !strings.Contains(string(got), "user.note") {
		t.Fatalf("the restore did not set the attribute, nothing to undo: %s", got)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...), exitComplete)
	after, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output()
	if string(after) != string(before) {
		t.Errorf("attributes of app/a.txt after the undo:\n%s\nbefore the restore:\n%s", after, before)
	}
}

// TestAttackXattrsNotSetOnPresentFile: a restore without --xattrs, then the same restore
// with --xattrs (the user forgot the flag; or a restore killed after placing files of
// another run): the file is "already there" (bytes, owner, mode and mtime as recorded), so
// the attribute and the ACL the archive records are never set, and the restore says
// complete, exit 0, no warning. "Already present" compares owner, mode and mtime, not the
// attributes, though --xattrs is asked for and fixMeta would set them.
func TestAttackXattrsNotSetOnPresentFile(t *testing.T) {
	t.Parallel()
	mustTool(t, "setfattr")
	mustTool(t, "getfattr")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}})
	src := filepath.Join(dir, "src/app/a.txt")
	if out, err := exec.Command("setfattr", "-n", "user.note", "-v", "archived", src).CombinedOutput(); err != nil {
		t.Skipf("setfattr: %v %s", err, out)
	}
	arch := filepath.Join(dir, "x.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--xattrs", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--xattrs", arch, dest)
	got, _ := exec.Command("getfattr", "-d", "-m", "user.", "--absolute-names", filepath.Join(dest, "app/a.txt")).Output()
	if r.code == exitComplete && !strings.Contains(r.stderr, "warning") && !strings.Contains(string(got), `user.note="archived"`) {
		t.Errorf("restore --xattrs exit 0, %q, yet app/a.txt lacks the recorded user.note: %q", strings.TrimSpace(r.stderr), got)
	}
}

// TestAttackRelinkReplacesPresentFileWithoutForce: the archive holds app/a and app/b, one
// file (a hard-link group). DEST holds them as two separate files with the archived bytes,
// owner, mode and mtime; b, the user's own copy, also carries an attribute (user.note). A
// restore without --force keeps both as "already there" and then replaces b by a hard link
// to a: b's file (and its attribute) is gone, with no before-state, though "nothing existing
// [is] replaced without --force" and a restore without it "only creates paths, and sets the
// owner, mode and mtime of files already present". (With --force the same happens and the
// before-state does not hold b: its undo leaves a and b one file.)
func TestAttackRelinkReplacesPresentFileWithoutForce(t *testing.T) {
	t.Parallel()
	mustTool(t, "setfattr")
	mustTool(t, "getfattr")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "same\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a"), filepath.Join(dir, "src/app/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "hl.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	// b becomes a separate copy, as cp -a gives it: same bytes, mode and mtime.
	a, b := filepath.Join(dest, "app/a"), filepath.Join(dest, "app/b")
	info, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dest, "app/b.copy")
	if err := os.WriteFile(tmp, []byte("same\n"), info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, info.Mode().Perm())
	os.Chtimes(tmp, info.ModTime(), info.ModTime())
	if out, err := exec.Command("setfattr", "-n", "user.note", "-v", "mine", tmp).CombinedOutput(); err != nil {
		t.Skipf("setfattr: %v %s", err, out)
	}
	if err := os.Rename(tmp, b); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dest, "app"), info.ModTime(), info.ModTime())
	var before syscall.Stat_t
	syscall.Stat(b, &before)
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	var after syscall.Stat_t
	syscall.Stat(b, &after)
	if after.Ino != before.Ino {
		attr, _ := exec.Command("getfattr", "-d", "-m", "user.", "--absolute-names", b).Output()
		t.Errorf("a restore without --force (exit %d, %q) replaced app/b, the user's file (inode %d), by a link to app/a (inode %d, %d links); its attribute: %q",
			r.code, strings.TrimSpace(r.stderr), before.Ino, after.Ino, after.Nlink, attr)
	}
	mustExit(t, r, exitComplete)
	if want := "app/b: restored as a separate file, not a hard link of app/a: it was there already as a file of its own"; !strings.Contains(r.stderr, want) {
		t.Errorf("no warning %q:\n%s", want, r.stderr)
	}
}

// TestAttackInterruptBeforeDispatchSaysComplete: a SIGINT that lands once the plan is made
// and before the workers are handed any entry (here: strace sends it as Run starts its move
// guard, inotify_init1, and holds the call until the signal is handled) makes the restore
// print "complete: 0 files, 0 dirs, 0 B restored", exit 0 and --json "complete", with
// nothing of the archive in DEST: the dispatcher stops at ctx.Done, no worker sees the
// cancelled context, and the workers' empty parts carry no error. About half the runs say
// so (the dispatcher's select picks between the stop and a free slot at random); the test
// tries 10 times.
func TestAttackInterruptBeforeDispatchSaysComplete(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	files := map[string]node{}
	for i := range 12 {
		files[fmt.Sprintf("f%02d", i)] = node{content: strings.Repeat("x", 1000+i)}
	}
	makeTree(t, filepath.Join(dir, "src/app"), files)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	for try := range 10 {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d", try))
		cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull,
			"-e", "inject=inotify_init1:signal=INT:delay_exit=200000:when=1", binary, "restore", "--jobs", "2", arch, dest)
		out, _ := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		entries, _ := os.ReadDir(filepath.Join(dest, "app"))
		n := len(entries)
		if code == exitComplete && n != len(files) {
			t.Fatalf("try %d: exit 0 with %d of %d files in DEST:\n%s", try, n, len(files), out)
		}
	}
}

// TestAttackListLongSpecialBits: list --long prints modes as ls does for plain files and
// folders (drwxr-xr-x, -rw-r--r--), but a setuid program as "urwxr-xr-x" (no file type, a
// "u" in its place), a setgid folder as "dgrwxrwxr-x" and a sticky one as "dtrwxrwxrwx"
// (eleven characters, the columns shifted): Go's fs.FileMode.String, which nobody reads as
// ls's -rwsr-xr-x, drwxrwsr-x and drwxrwxrwt.
func TestAttackListLongSpecialBits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"p": {content: "prog\n"}, "d/g": {content: "g\n"}})
	for path, mode := range map[string]uint32{"src/app/p": syscall.S_ISUID | 0o755, "src/app/d": syscall.S_ISGID | 0o775, "src/app": syscall.S_ISVTX | 0o777} {
		if err := syscall.Chmod(filepath.Join(dir, path), mode); err != nil {
			t.Fatal(err)
		}
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	r := backup(t, runOpts{dir: dir}, "list", "--long", arch)
	mustExit(t, r, exitComplete)
	for name, want := range map[string]string{"app/": "drwxrwxrwt ", "app/d/": "drwxrwsr-x ", "app/p": "-rwsr-xr-x "} {
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasSuffix(line, " "+name) {
				found = true
				if !strings.HasPrefix(line, want) {
					t.Errorf("list --long: %q, want it to begin %q", line, want)
				}
			}
		}
		if !found {
			t.Errorf("list --long lacks %s:\n%s", name, r.stdout)
		}
	}
}

// TestAttackPrintedUndoNotAShellCommand: restore --force prints its undo as a command to
// run ("undo: backup restore --force --xattrs BEFORE-STATE DEST"), but the paths in it are
// not quoted for a shell: for a DEST named "my dest" the command, pasted into sh, is
// `backup restore ... /…/my dest-before-restore-….zip my dest`, four operands (a usage
// error), and a DEST named `x$(id)` or `x;cmd` would run what its name holds. The printed
// undo should be a command that does the undo when run as printed.
func TestAttackPrintedUndoNotAShellCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "my dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", arch, dest)
	mustExit(t, r, exitComplete)
	_, after, ok := strings.Cut(r.stderr, "(undo: backup ")
	if !ok {
		t.Fatalf("no undo command printed:\n%s", r.stderr)
	}
	line, _, _ := strings.Cut(after, "\n")
	line = strings.TrimSuffix(line, ")")
	cmd := exec.Command("sh", "-c", `"$0" `+line, binary)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Errorf("the printed undo, run by sh (backup %s): exit %d\n%s", line, code, out)
	}
	assertContent(t, filepath.Join(dest, "app/a.txt"), "mine\n")
}

// TestAttackUndoMovesFolderMtime: DEST holds app/ and app/sub/ with the archived modes and
// mtimes, and app/sub/b.txt is missing. restore --force creates app/sub/b.txt (and gives
// app/sub its archived mtime again: it wrote into it); its before-state holds no folder,
// only the created list. The undo removes app/sub/b.txt, which moves app/sub's mtime to the
// time of the undo, and nothing sets it back: after restore and undo, app/sub's mtime is
// not what it was. (The restore itself takes care that its removals move no folder's
// mtime.)
func TestAttackUndoMovesFolderMtime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	sub := filepath.Join(dest, "app/sub")
	before, err := os.Stat(sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(sub, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(sub, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...), exitComplete)
	if _, err := os.Lstat(filepath.Join(sub, "b.txt")); err == nil {
		t.Fatalf("the undo left app/sub/b.txt")
	}
	after, err := os.Stat(sub)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("app/sub's mtime after restore and undo is %v, was %v", after.ModTime(), before.ModTime())
	}
}

// TestAttackRestoreCompleteWithoutManifestEntries: a backup (--symlinks store) of app/ with
// a folder app/empty and a symlink app/lnk, from which those two entries were deleted
// afterwards (zip -d does it; here a copy of every other entry as stored). verify fails it
// ("directory in the manifest but missing from the archive", the same for the symlink);
// restore says complete, exit 0, and DEST has neither: a file missing from the archive is
// damage (exit 1), a folder or symlink the manifest records and the archive lacks is not
// reported at all.
func TestAttackRestoreCompleteWithoutManifestEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}, "empty": {kind: "dir"}})
	if err := os.Symlink("a.txt", filepath.Join(dir, "src/app/lnk")); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "full.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", full, "src/app"), exitComplete)
	cut := filepath.Join(dir, "cut.zip")
	zr, err := zip.OpenReader(full)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := os.Create(cut)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		if e.Name == "app/empty/" || e.Name == "app/lnk" {
			continue
		}
		if err := zw.Copy(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if v := backup(t, runOpts{dir: dir}, "verify", cut); v.code != exitFailed {
		t.Fatalf("verify of the cut archive: exit %d %s", v.code, v.stderr)
	}
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", cut, dest)
	_, errDir := os.Lstat(filepath.Join(dest, "app/empty"))
	_, errLink := os.Lstat(filepath.Join(dest, "app/lnk"))
	if r.code == exitComplete && (errDir != nil || errLink != nil) {
		t.Errorf("restore exit 0 (%q), but DEST lacks what the manifest records: app/empty: %v; app/lnk: %v", strings.TrimSpace(r.stderr), errDir, errLink)
	}
}

// TestAttackVerifyPassesUnsafeCreatedPath: a before-state whose manifest lists a created
// path "app/../.." (what its undo would remove) verifies ("ok", exit 0), though restore
// refuses it ("created path: unsafe name", exit 1): verify says it checks that every name
// is safe to restore.
func TestAttackVerifyPassesUnsafeCreatedPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	rewriteManifest(t, arch, hostile, func(m map[string]any) {
		m["created"] = []any{map[string]any{"path": "app/../..", "type": "dir"}}
	})
	r := backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest"))
	v := backup(t, runOpts{dir: dir}, "verify", hostile)
	if r.code != exitComplete && v.code == exitComplete {
		t.Errorf("verify exit 0 (%q) for an archive restore refuses (exit %d: %q)", v.stdout, r.code, strings.TrimSpace(r.stderr))
	}
}

// TestAttackDeepPathUnderSmallLimit: TestAttackDeepEntryStarvesNeighbours under ulimit -n
// 40 rather than 256: a file 50 folders deep, --jobs 1. A worker keeps the top 64 folders
// of its path open (maxOpenChain), so under a limit below about 70 the deep path fails
// ("too many open files", exit 3), though restore.md says "a path of any depth within
// PATH_MAX is restored under a small limit", never with "too many open files": the chain
// kept open is not bounded by the limit.
func TestAttackDeepPathUnderSmallLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	deep := strings.Repeat("d/", 50) + "f"
	for _, name := range []string{"first", deep, "ok"} {
		fh := &zip.FileHeader{Name: name, Method: zip.Store}
		fh.SetMode(0o644)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data"))
	}
	zw.Close()
	arch := filepath.Join(dir, "deep.zip")
	os.WriteFile(arch, buf.Bytes(), 0o644)
	dest := filepath.Join(dir, "dest")
	cmd := exec.Command("sh", "-c", `ulimit -n 40 && exec "$@"`, "sh", binary, "restore", "--jobs", "1", arch, dest)
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(dest, deep)); serr != nil {
		t.Errorf("the file 50 folders deep not restored under ulimit -n 40 (%v):\n%.600s", err, out)
	}
}

// TestAttackRestoreCompleteOnOverlapVerifyFinds: a backup whose folder entry app/empty/ has
// its local header's extra length raised by 40 (one byte changed), so that its local header
// runs into the next entry's. verify fails it (the entries after it: "its local header is
// inside the entry app/empty/ (entries that overlap, as in a zip bomb)"); restore writes
// every entry and says complete, exit 0. restore.md: what verify finds from the headers
// alone (entries whose bytes overlap) is checked before anything is written, those entries
// are not written, and restore exits 1 as verify does.
func TestAttackRestoreCompleteOnOverlapVerifyFinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	data, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	name := []byte("app/empty/")
	at := -1
	for i := 0; i+30+len(name) <= len(data); i++ {
		if bytes.Equal(data[i:i+4], []byte("PK\x03\x04")) && int(data[i+26])|int(data[i+27])<<8 == len(name) && bytes.Equal(data[i+30:i+30+len(name)], name) {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no local header of app/empty/")
	}
	extra := int(data[at+28]) | int(data[at+29])<<8
	extra += 40
	data[at+28], data[at+29] = byte(extra), byte(extra>>8)
	bad := filepath.Join(dir, "bad.zip")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	v := backup(t, runOpts{dir: dir}, "verify", bad)
	if v.code != exitFailed || !strings.Contains(v.stderr, "overlap") {
		t.Skipf("verify does not find the overlap here: exit %d %s", v.code, v.stderr)
	}
	r := backup(t, runOpts{dir: dir}, "restore", bad, filepath.Join(dir, "dest"))
	if r.code == exitComplete {
		t.Errorf("verify: exit %d\n%s\nrestore: exit 0: %s", v.code, v.stderr, r.stderr)
	}
}

// TestAttackRestoreCompleteOnHiddenLocalEntry: a zip (made by another tool: no manifest) of
// a.txt and b.txt with a whole local entry, evil.txt, between them that the central
// directory does not list: a streaming reader (cat x.zip | bsdtar -x) extracts evil.txt, a
// central-directory reader does not. verify fails it ("b.txt: damaged: N bytes before its
// local header that no entry covers"); restore says complete, exit 0: restore and verify
// give two verdicts on one archive.
func TestAttackRestoreCompleteOnHiddenLocalEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	zipOf := func(names ...string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			fh := &zip.FileHeader{Name: n, Method: zip.Store}
			fh.SetMode(0o644)
			w, err := zw.CreateHeader(fh)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(n + " data\n"))
		}
		zw.Close()
		return buf.Bytes()
	}
	// The local entry of evil.txt: a zip of it alone, up to its central directory.
	evil := zipOf("evil.txt")
	evil = evil[:bytes.Index(evil, []byte("PK\x01\x02"))]
	good := zipOf("a.txt", "b.txt")
	cd := bytes.Index(good, []byte("PK\x01\x02"))
	second := bytes.Index(good[4:cd], []byte("PK\x03\x04")) + 4 // b.txt's local header
	out := slices.Concat(good[:second], evil, good[second:])
	shift := uint32(len(evil))
	// Move the central directory's offsets past the inserted bytes: b.txt's local header,
	// and the end record's offset of the central directory.
	cdAt := cd + len(evil)
	for i := cdAt; i+46 <= len(out); i++ {
		if bytes.Equal(out[i:i+4], []byte("PK\x01\x02")) {
			off := bin.LittleEndian.Uint32(out[i+42:])
			if off >= uint32(second) {
				bin.LittleEndian.PutUint32(out[i+42:], off+shift)
			}
		}
	}
	eocd := bytes.LastIndex(out, []byte("PK\x05\x06"))
	bin.LittleEndian.PutUint32(out[eocd+16:], bin.LittleEndian.Uint32(out[eocd+16:])+shift)
	arch := filepath.Join(dir, "gap.zip")
	if err := os.WriteFile(arch, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if names := readZipGo(t, arch); len(names) != 2 {
		t.Fatalf("the crafted zip lists %d entries, want a.txt and b.txt", len(names))
	}
	v := backup(t, runOpts{dir: dir}, "verify", arch)
	if v.code != exitFailed {
		t.Skipf("verify: exit %d %s", v.code, v.stderr)
	}
	r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
	if r.code == exitComplete {
		t.Errorf("verify: exit %d\n%s\nrestore: exit 0: %s", v.code, v.stderr, r.stderr)
	}
}
