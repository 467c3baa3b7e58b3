package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cutCalls are the calls that change the file system which the strace runner cuts short:
// those of restore, of the publishing of an archive and its receipt, of LATEST and of the
// attic. The dynamic loader and the race detector's runtime make none of them (they stat
// and open files, and would fail before main, so those are left to eintr's own tests).
const cutCalls = "renameat2,renameat,linkat,mkdirat,unlinkat,symlinkat,fchmod,fchmodat,fchown,fchownat," +
	"utimensat,fsetxattr,lsetxattr,flock,fsync,fdatasync,name_to_handle_at"

// cutRunner runs the binary in a folder with some of its calls cut short by a signal.
type cutRunner func(t *testing.T, dir string, args ...string) result

// cutBeforeDone runs the binary under strace, which cuts every other call of cutCalls in
// each thread short (EINTR) before it is made: each call fails once, then its repeat is
// made.
func cutBeforeDone(t *testing.T, dir string, args ...string) result {
	t.Helper()
	strace := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=" + cutCalls, "-e", "inject=" + cutCalls + ":error=EINTR:when=1+2", binary}
	cmd := exec.Command("strace", append(strace, args...)...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// cutAfterDone returns a runner that runs the binary under testdata/cutdone, which reports
// every step-th call that changed a name (a rename, link, mkdir, unlink, symlink or create)
// as cut short after the kernel made it, as a CIFS or FUSE server may.
func cutAfterDone(t *testing.T, step int) cutRunner {
	t.Helper()
	mustTool(t, "gcc")
	tool := filepath.Join(t.TempDir(), "cutdone")
	if out, err := exec.Command("gcc", "-O2", "-o", tool, filepath.Join("testdata", "cutdone", "cutdone.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	return func(t *testing.T, dir string, args ...string) result {
		t.Helper()
		cmd := exec.Command(tool, append([]string{strconv.Itoa(step), binary}, args...)...)
		cmd.Dir = dir
		return runCmd(t, cmd)
	}
}

// TestEveryChangeCutShort runs a backup set's life with the calls that change the file
// system cut short by a signal, before the kernel made them (strace) and after (cutdone,
// every third or fifth change): two runs into a set (the second reuses the first), a
// restore into a new folder, a restore --force over changed files with its before-state,
// the undo of it, a prune into an attic on another file system (copied in), and the adopt
// of what the attic holds into a new set. Each says complete, and each leaves what it would
// have left without the signals, and no temp file. Before package eintr, the first rename
// of the archive failed its run, and a restore reported each file and folder not restored;
// after it, a create cut short after it made its file left that file behind.
func TestEveryChangeCutShort(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	for name, run := range map[string]cutRunner{"before": cutBeforeDone, "after, every 3rd": cutAfterDone(t, 3), "after, every 5th": cutAfterDone(t, 5)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			setLifeCutShort(t, run)
		})
	}
}

func setLifeCutShort(t *testing.T, run cutRunner) {
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
	if os.Geteuid() == 0 { // CI: so that prune copies into the attic, and adopt out of it
		mountTmpfs(t, attic, "4m")
	}
	for range 2 {
		mustExit(t, run(t, dir, "create", "-q", "--symlinks", "store", "--output-dir", set, "app"), exitComplete)
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
	mustExit(t, run(t, dir, "restore", "-q", latest, dest), exitComplete)
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
	mustExit(t, run(t, dir, "restore", "-q", "--force", "--undo-dir", dir, latest, dest), exitComplete)
	compareTrees(t, src, filepath.Join(dest, "app"))
	undo, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(undo) != 1 {
		t.Fatalf("before-states %q, want one", undo)
	}
	mustExit(t, run(t, dir, "restore", "-q", "--force", "--no-undo", undo[0], dest), exitComplete)
	compareTrees(t, filepath.Join(saved, "app"), filepath.Join(dest, "app"))

	mustExit(t, run(t, dir, "prune", "--keep-last", "1", "--attic", attic, set), exitComplete)
	if got := listDir(t, attic); !slices.Equal(got, files[:2]) {
		t.Errorf("the attic holds %q, want %q", got, files[:2])
	}
	if got := setArchives(t, set); !slices.Equal(got, files[2:]) {
		t.Errorf("the set holds %q after the prune, want %q", got, files[2:])
	}
	set2 := filepath.Join(dir, "set2")
	mustExit(t, run(t, dir, "adopt", set2, filepath.Join(attic, files[0])), exitComplete)
	if got := setArchives(t, set2); len(got) != 2 {
		t.Errorf("the new set holds %q, want the adopted archive and its receipt", got)
	}
	for _, folder := range []string{dir, dest, set, set2, attic} {
		if left := tempsIn(t, folder); len(left) > 0 {
			t.Errorf("temp files left: %q", left)
		}
	}
}

// tempsIn lists the files below dir that a run makes under a temp name (.NAME.tmp-…,
// .NAME.restore-…, .NAME.link-…) or for its journals and spools (.backup-…), but the lock
// of a set, which stays.
func tempsIn(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") && name != ".backup.lock" && (strings.HasPrefix(name, ".backup-") ||
			strings.Contains(name, ".tmp-") || strings.Contains(name, ".restore-") || strings.Contains(name, ".link-")) {
			left = append(left, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}
