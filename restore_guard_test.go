package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestAttackMountOverFolderUnnoticed: a restore is held (strace) right after it put the
// first file of app/d1 in place; meanwhile app/d1 is covered by a mount (a bind mount of an
// empty folder outside DEST; a user can do the same with fusermount over a folder of their
// own in DEST, with no privilege). A mount makes no inotify event, so the move guard stays
// quiet and the rest of app/d1's files go into the folder hidden below the mount, and the
// restore reports complete. The old checks (fstatat of d1 in app: the mount's root, another
// identity) refused them: the name app/d1 now holds another folder, which is exactly "a
// folder replaced during the restore receives nothing more" (restore/doc.go). Correct: f2
// and f3 fail "was moved or replaced during the restore", exit 3, and the covered folder
// keeps only f1.
func TestAttackMountOverFolderUnnoticed(t *testing.T) {
	mustRoot(t) // mount
	mustTool(t, "strace")
	dir := t.TempDir()
	arch := d1Archive(t, dir)
	dest, cover := filepath.Join(dir, "dest"), filepath.Join(dir, "outside/cover")
	if err := os.MkdirAll(cover, 0o755); err != nil {
		t.Fatal(err)
	}
	mounted := false
	t.Cleanup(func() {
		if mounted {
			exec.Command("umount", filepath.Join(dest, "app/d1")).Run()
		}
	})
	code, stderr := restoreSwapping(t, dir, arch, dest, func() {
		if out, err := exec.Command("mount", "--bind", cover, filepath.Join(dest, "app/d1")).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v %s", err, out)
		}
		mounted = true
	})
	if out, err := exec.Command("umount", filepath.Join(dest, "app/d1")).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	mounted = false
	if code != exitIncomplete || !strings.Contains(stderr, "app/d1/f2: app/d1 was moved or replaced during the restore") {
		t.Errorf("exit %d, want %d with app/d1/f2 refused\n%s", code, exitIncomplete, stderr)
	}
	if got := listTree(t, filepath.Join(dest, "app/d1")); !slices.Equal(got, []string{"f1"}) {
		t.Errorf("the folder covered by a mount received %q after it was covered, want f1 only", got)
	}
}

// TestAttackProcNotProcfsMovesOutUnnoticed: the guard sets each watch through the path
// "/proc/self/fd/N" and trusts that it names the folder open as N; nothing checks that /proc
// is procfs. Here the restore runs (as root, in a mount namespace of its own, as a chroot or
// container someone else prepared would have it) with a /proc that is a plain tmpfs whose
// self/fd/N are symlinks to one decoy folder: every watch lands on the decoy, none on a
// folder of DEST, the guard stays quiet, and app/d1 moved out of DEST (a symlink to it left
// in its place) receives f2 and f3: written outside DEST. Without /proc at all the watch fails
// and the guard trips; the old checks refused f2 and f3 whatever /proc was. Correct: the guard
// makes sure the watch is on the folder open (procfs at /proc, or the watched folder's identity
// compared with the descriptor's), else trips; f2 and f3 fail, exit 3, the moved folder keeps
// f1 only.
func TestAttackProcNotProcfsMovesOutUnnoticed(t *testing.T) {
	mustRoot(t) // unshare -m, mount
	mustTool(t, "strace")
	mustTool(t, "unshare")
	dir := t.TempDir()
	arch := d1Archive(t, dir)
	dest, moved, decoy := filepath.Join(dir, "dest"), filepath.Join(dir, "outside/moved"), filepath.Join(dir, "decoy")
	os.MkdirAll(filepath.Dir(moved), 0o755)
	os.MkdirAll(decoy, 0o755)
	script := `set -e; mount --make-rprivate /; mount -t tmpfs none /proc; mkdir -p /proc/self/fd
i=0; while [ $i -lt 256 ]; do ln -s "$DECOY" /proc/self/fd/$i; i=$((i+1)); done
exec "$BIN" restore --jobs 1 "$ARCH" "$DEST"`
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=renameat2", "-e", "inject=renameat2:delay_exit=1500000:when=1",
		"unshare", "-m", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "DECOY="+decoy, "BIN="+binary, "ARCH="+arch, "DEST="+dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "renameat2(") && returned(c) })
	if err := os.Rename(filepath.Join(dest, "app/d1"), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, filepath.Join(dest, "app/d1")); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code != exitIncomplete || !strings.Contains(stderr.String(), "app/d1/f2: app/d1 is a symlink or not a directory") {
		t.Errorf("exit %d, want %d with app/d1/f2 refused\n%s", code, exitIncomplete, stderr.String())
	}
	if got := listTree(t, moved); !slices.Equal(got, []string{"f1"}) {
		t.Errorf("the folder moved out of DEST holds %q, want f1 only", got)
	}
}

// TestAttackUserFuseMountOverOwnFolderUnnoticed: the unprivileged variant of
// TestAttackMountOverFolderUnnoticed. Root restores into a DEST where app/d1 already exists
// and belongs to nobody (a user's folder, as in a restore of /home). Held after the first
// file of app/d1 is in place, nobody covers his own folder with a FUSE mount (the setuid
// fusermount lets any user mount on a folder he may write, -o nonempty included; no
// privilege, no namespace of his own). No inotify event: the guard stays quiet, f2 and f3
// go into the covered folder, while the name app/d1 holds another file system's folder, and
// the restore counts them restored. The old checks refused them (fstatat of d1 crosses into
// the FUSE mount, which root may not enter without allow_other: "app/d1/f2: app/d1:
// permission denied"). Correct: f2 and f3 fail, exit 3, and the covered folder keeps only
// f1.
//
// This machine's /dev/fuse is 0600 (stock distributions make it 0666): the restore and
// nobody's fusermount run in a mount namespace of their own (the same one) whose
// /dev/fuse is a 0666 node of the same device, as on such a distribution.
func TestAttackUserFuseMountOverOwnFolderUnnoticed(t *testing.T) {
	mustRoot(t) // the restore as root, nobody as the attacker; the namespace
	for _, tool := range []string{"strace", "fusermount", "unshare", "nsenter", "setpriv"} {
		mustTool(t, tool)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	dir := sharedTempDir(t)
	arch := d1Archive(t, dir)
	dest := filepath.Join(dir, "dest")
	d1 := filepath.Join(dest, "app/d1")
	if err := os.MkdirAll(d1, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dest, 0o755)
	os.Chmod(filepath.Join(dest, "app"), 0o755)
	if err := os.Chown(d1, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	log, node := filepath.Join(dir, "strace.log"), filepath.Join(dir, "fuse")
	script := `set -e; mount --make-rprivate /; mknod -m 666 "$NODE" c 10 229; mount --bind "$NODE" /dev/fuse
echo $$ > "$PIDFILE"; exec strace -f -o "$LOG" -e trace=linkat -e inject=linkat:delay_exit=1500000:when=1 "$BIN" restore --jobs 1 "$ARCH" "$DEST"`
	pidfile := filepath.Join(dir, "pid")
	cmd := exec.Command("unshare", "-m", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "NODE="+node, "LOG="+log, "BIN="+binary, "ARCH="+arch, "DEST="+dest, "PIDFILE="+pidfile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "linkat(") && returned(c) })
	pid, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0]) // the /dev/fuse descriptor in flight goes with it
	theirs := os.NewFile(uintptr(fds[1]), "fusermount comm")
	fm := exec.Command("nsenter", "-t", strings.TrimSpace(string(pid)), "-m", "--",
		"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "fusermount", "-o", "nonempty", "--", d1)
	fm.Env = append(os.Environ(), "_FUSE_COMMFD=3")
	fm.ExtraFiles = []*os.File{theirs}
	out, err := fm.CombinedOutput()
	theirs.Close()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("fusermount as nobody: %v %s", err, out)
	}
	cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code != exitIncomplete || !strings.Contains(stderr.String(), "app/d1/f2: app/d1") || !strings.Contains(stderr.String(), "app/d1/f3: app/d1") {
		t.Errorf("exit %d, want %d with app/d1/f2 and f3 refused\n%s", code, exitIncomplete, stderr.String())
	}
	// The namespace, and the FUSE mount with it, are gone with the restore: d1 is uncovered.
	if got := listTree(t, d1); !slices.Equal(got, []string{"f1"}) {
		t.Errorf("the folder nobody covered with a FUSE mount received %q after it was covered, want f1 only", got)
	}
}
