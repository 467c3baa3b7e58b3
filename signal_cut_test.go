package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cutCalls are the calls that change the file system which cutShort cuts short: those of
// restore, of the publishing of an archive and its receipt, of LATEST and of the attic. The
// dynamic loader and the race detector's runtime make none of them (they stat and open
// files, and would fail before main, so those are left to eintr's own tests).
const cutCalls = "renameat2,renameat,linkat,mkdirat,unlinkat,symlinkat,fchmod,fchmodat,fchown,fchownat," +
	"utimensat,fsetxattr,lsetxattr,flock,fsync,fdatasync,name_to_handle_at"

// cutShort runs the binary in dir under strace, which cuts every other call of cutCalls in
// each thread short (EINTR), as a signal does on CIFS and FUSE mounts: each call fails once,
// then its repeat is made.
func cutShort(t *testing.T, dir string, args ...string) result {
	t.Helper()
	strace := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=" + cutCalls, "-e", "inject=" + cutCalls + ":error=EINTR:when=1+2", binary}
	cmd := exec.Command("strace", append(strace, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("strace: %v", err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// TestEveryChangeCutShortOnce runs a backup set's life with every call that changes the
// file system cut short once by a signal: two runs into a set (the second reuses the
// first), a restore into a new folder, a restore --force over changed files with its
// before-state, the undo of it, and a prune into an attic. Each says complete, and each
// leaves what it would have left without the signals. Before eintr, the first rename of
// the archive failed its run, and the restore reported each file and folder not restored.
func TestEveryChangeCutShortOnce(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{
		"a.txt": {content: "alpha\n"}, "conf/b.toml": {content: "b = 1\n", mode: 0o640},
		"data/c.bin": {content: strings.Repeat("c", 70000)}, "data/deep/d": {content: "d\n"},
		"link": {kind: "symlink", content: "a.txt"}, "ro/": {kind: "dir", mode: 0o555},
	})
	if err := os.Link(filepath.Join(src, "a.txt"), filepath.Join(src, "data/a-again")); err != nil {
		t.Fatal(err)
	}
	set, attic := filepath.Join(dir, "set"), filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustExit(t, cutShort(t, dir, "create", "-q", "--symlinks", "store", "--output-dir", set, "app"), exitComplete)
	}
	files := setArchives(t, set)
	if len(files) != 4 || readLatest(t, set) != files[2] {
		t.Fatalf("the set holds %q with LATEST %q, want two runs and the second LATEST", files, readLatest(t, set))
	}
	latest := filepath.Join(set, files[2])
	if rc := readReceipt(t, latest+".receipt.json"); rc.Status != "complete" {
		t.Fatalf("the second run's receipt says %s", rc.Status)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-q", latest), exitComplete)

	dest := filepath.Join(dir, "dest")
	mustExit(t, cutShort(t, dir, "restore", "-q", latest, dest), exitComplete)
	compareTrees(t, src, filepath.Join(dest, "app"))

	for _, name := range []string{"a.txt", "data/deep/d"} {
		if err := os.WriteFile(filepath.Join(dest, "app", name), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := filepath.Join(dir, "saved")
	if out, err := exec.Command("cp", "-a", dest, saved).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	mustExit(t, cutShort(t, dir, "restore", "-q", "--force", "--undo-dir", dir, latest, dest), exitComplete)
	compareTrees(t, src, filepath.Join(dest, "app"))
	undo, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(undo) != 1 {
		t.Fatalf("before-states %q, want one", undo)
	}
	mustExit(t, cutShort(t, dir, "restore", "-q", "--force", "--no-undo", undo[0], dest), exitComplete)
	compareTrees(t, filepath.Join(saved, "app"), filepath.Join(dest, "app"))

	mustExit(t, cutShort(t, dir, "prune", "--keep-last", "1", "--attic", attic, set), exitComplete)
	if got := listDir(t, attic); !slices.Equal(got, files[:2]) {
		t.Errorf("the attic holds %q, want %q", got, files[:2])
	}
	if got := setArchives(t, set); !slices.Equal(got, files[2:]) {
		t.Errorf("the set holds %q after the prune, want %q", got, files[2:])
	}
}
