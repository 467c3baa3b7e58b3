package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// userNote reads path's user.note attribute ("" when it has none).
func userNote(path string) string {
	buf := make([]byte, 64)
	n, err := unix.Getxattr(path, "user.note", buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// TestAttackXattrsInPlaceReadOnlyAsUser: a user (not root) restores with --xattrs an archive
// whose app/f is 0644 with user.note "new" into a DEST that holds app/f with the same bytes,
// but read-only (0444, user.note "old"): the file is kept as present and its metadata set in
// place. The attributes now come before the mode, so they are set while the file is still
// 0444, and a user.* attribute cannot be set on a file without its owner's write bit: the
// attribute stays "old" (a warning, exit unchanged), then the chmod makes it 0644. Before
// the change (chmod first, then attributes) it came back "new". The same happens to the
// undo of a restore --force that made a file read-only in place: its before-state holds the
// file 0644 with its old attribute, and the undo cannot put that attribute back.
// Correct: a file or folder whose attributes are set in place is writable to its owner when
// they are set (chmod to the final mode first when that mode has the owner's write bit, or
// u+w for the attributes and the final mode after), so app/f ends 0644 with user.note "new".
func TestAttackXattrsInPlaceReadOnlyAsUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "same\n", mode: 0o644}})
	if err := unix.Setxattr(filepath.Join(src, "app/f"), "user.note", []byte("new"), 0); err != nil {
		t.Skipf("user xattrs not supported here: %v", err)
	}
	zip := readableArchive(t, dir, src, "--xattrs")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f": {content: "same\n"}})
	f := filepath.Join(dest, "app/f")
	if err := unix.Setxattr(f, "user.note", []byte("old"), 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dest, filepath.Join(dest, "app"), f} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(f, 0o444); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--xattrs", zip, dest)
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := userNote(f); got != "new" || fi.Mode().Perm() != 0o644 {
		t.Errorf("restore --xattrs as a user over a read-only app/f with the same bytes: mode %v, user.note %q; want 0644 and \"new\" (the archive's); exit %d, stderr:\n%s", fi.Mode().Perm(), got, r.code, r.stderr)
	}
}

// TestAttackUndoXattrsReadOnlyInPlaceAsUser: a user restores --force --xattrs an archive
// whose app/f has the bytes DEST's app/f has, but mode 0444 and user.note "new"; DEST's is
// 0644 with user.note "old". The restore keeps the file and sets its attribute, then its mode,
// in place (0444, "new"); the before-state records 0644 and "old". The printed undo then sets
// the attributes first, on the 0444 file: EACCES, user.note stays "new" (a warning), and the
// mode goes back to 0644: the undo says it undid the restore but the attribute the restore
// changed is not put back. Before the change (chmod first) the undo was exact.
// Correct: after the printed undo app/f is 0644 with user.note "old".
func TestAttackUndoXattrsReadOnlyInPlaceAsUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "same\n"}})
	if err := unix.Setxattr(filepath.Join(src, "app/f"), "user.note", []byte("new"), 0); err != nil {
		t.Skipf("user xattrs not supported here: %v", err)
	}
	if err := os.Chmod(filepath.Join(src, "app/f"), 0o444); err != nil {
		t.Fatal(err)
	}
	zip := readableArchive(t, dir, src, "--xattrs")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f": {content: "same\n", mode: 0o644}})
	f := filepath.Join(dest, "app/f")
	if err := unix.Setxattr(f, "user.note", []byte("old"), 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dest, filepath.Join(dest, "app"), f} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--force", "--xattrs", zip, dest)
	mustExit(t, r, exitComplete)
	if got := userNote(f); got != "new" {
		t.Fatalf("restore --force --xattrs: user.note %q, want \"new\"; stderr:\n%s", got, r.stderr)
	}
	line := strings.Join(printedUndo(t, r.stderr), " ")
	undo := backup(t, runOpts{dir: dir, uid: nobody}, strings.Fields(line)...)
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := userNote(f); got != "old" || fi.Mode().Perm() != 0o644 {
		t.Errorf("the printed undo (%s) as the user: app/f mode %v, user.note %q; want 0644 and \"old\" as before the restore; exit %d, stderr:\n%s", line, fi.Mode().Perm(), got, undo.code, undo.stderr)
	}
}

// TestAttackXattrsACLThenUserReadOnlyAsUser: a user (not root) restores with --xattrs a
// read-only file (0444) and a read-only folder (0555) that carry an ACL (an entry for
// another user, so system.posix_acl_access is recorded) and a user.* attribute. The change
// sets the attributes before the mode so that "a read-only file or folder still takes its
// user.* attributes from a user other than root" (docs/restore.md), and creates the file
// with its owner's write bit for that. But the attributes are set in name order, and
// system.posix_acl_access comes before user.*: setting the ACL sets the mode with it
// (user::r--, the ACL's), so the file is read-only again when user.note is set: EACCES,
// the attribute is lost: the file's with a warning, the folder's without any (stderr names
// only app/f), and restore exits 0 and says complete.
// Correct: both come back with their ACL and user.note (the ACL set after the user.*
// attributes, or the owner's write bit kept until all attributes are set and the mode after).
func TestAttackXattrsACLThenUserReadOnlyAsUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfacl")
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "ro\n"}, "app/d/x": {content: "in\n"}})
	for _, p := range []string{"app/f", "app/d"} {
		path := filepath.Join(src, p)
		if err := unix.Setxattr(path, "user.note", []byte("kept"), 0); err != nil {
			t.Skipf("user xattrs not supported here: %v", err)
		}
		if out, err := exec.Command("setfacl", "-m", "u:bin:r", path).CombinedOutput(); err != nil {
			t.Skipf("setfacl: %v %s", err, out)
		}
	}
	if err := os.Chmod(filepath.Join(src, "app/f"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "app/d"), 0o555); err != nil {
		t.Fatal(err)
	}
	zip := readableArchive(t, dir, src, "--xattrs")
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--xattrs", zip, dest)
	var lost []string
	for _, p := range []string{"app/f", "app/d"} {
		path := filepath.Join(dest, p)
		buf := make([]byte, 256)
		if _, err := unix.Getxattr(path, "system.posix_acl_access", buf); err != nil {
			lost = append(lost, p+" (its ACL)")
		}
		if userNote(path) != "kept" {
			lost = append(lost, p+" (user.note)")
		}
	}
	if len(lost) > 0 {
		t.Errorf("restore --xattrs as a user of a read-only file and folder with an ACL and user.note: lost %v; exit %d, stderr:\n%s", lost, r.code, r.stderr)
	}
}

// TestAttackXattrsUmaskNoOwnerWriteAsUser: a user (not root) whose umask takes away the
// owner's write bit (umask 0277: files it creates are private and read-only until chmodded)
// restores with --xattrs an ordinary 0644 file with user.note into a DEST folder that exists.
// The file is made (O_TMPFILE with mode 0644|0200, or the 0600 temp file) under that umask,
// so it is 0400 when the attributes are now set, before the chmod: "set user.note:
// permission denied", a warning, exit 0, the attribute lost, though the file ends 0644
// ("Files keep their permission bits ... exactly, whatever the umask", docs/restore.md).
// Before the change the chmod to 0644 came first and the attribute was set.
// Correct: app/f comes back 0644 with user.note, whatever the user's umask (the owner's
// write bit given by fchmod, which the umask does not narrow, before the attributes).
func TestAttackXattrsUmaskNoOwnerWriteAsUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "hi\n", mode: 0o644}})
	if err := unix.Setxattr(filepath.Join(src, "app/f"), "user.note", []byte("kept"), 0); err != nil {
		t.Skipf("user xattrs not supported here: %v", err)
	}
	zip := readableArchive(t, dir, src, "--xattrs")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app": {kind: "dir"}})
	for _, p := range []string{dest, filepath.Join(dest, "app")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", `umask 0277; exec "$0" "$@"`, binary, "restore", "--xattrs", zip, dest)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, _ := cmd.CombinedOutput()
	f := filepath.Join(dest, "app/f")
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatalf("app/f not restored: %v\n%s", err, out)
	}
	if got := userNote(f); got != "kept" || fi.Mode().Perm() != 0o644 {
		t.Errorf("restore --xattrs as a user with umask 0277: app/f mode %v, user.note %q; want 0644 and \"kept\"; exit %d, output:\n%s", fi.Mode().Perm(), got, cmd.ProcessState.ExitCode(), out)
	}
}
