package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/backupset"
)

// TestAttackSweepFolderFstatEIOSaysMoved: a restore into an empty DEST opens app, and
// before each file checks that the folder is still there (an fstat of the folder it holds
// open, while the move guard saw nothing). That fstat fails (EIO, the 2nd or 3rd fstat of
// app's descriptor). The restore said "app/b: app was moved or replaced during the restore
// (not restored)", exit 3: an I/O error told as someone's swap, and the error itself nowhere.
// Correct: as for the lstat of the same check (764f222), a check that cannot be made fails
// the entry with that error ("app: fstat: input/output error"), which says nothing of a move.
func TestAttackSweepFolderFstatEIOSaysMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}, "b": {content: "b\n"}, "sub/c": {content: "c\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	for k := 1; k <= 4; k++ {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d", k))
		r := straceRun(t, dir, filepath.Join(dest, "app"), "fstat", fmt.Sprintf("fstat:error=EIO:when=%d", k),
			"restore", "a.zip", dest)
		if strings.Contains(r.stderr, "moved or replaced") {
			t.Errorf("fstat %d of app failed (EIO), nothing moved, and restore says (exit %d):\n%s", k, r.code, r.stderr)
		}
		if r.code != exitComplete && !strings.Contains(r.stderr, "input/output error") {
			t.Errorf("fstat %d of app failed (EIO): exit %d without the error:\n%s", k, r.code, r.stderr)
		}
	}
}

// TestAttackSweepLatestStatEIOAfterMoveSaysNotMoved: a set run writes LATEST (temp file,
// fsync, rename, folder fsync), then lstats it for its new ETag. That lstat fails (EIO, the
// 5th or 6th lstat of LATEST's path in the run). The run said "LATEST not moved: lstat …/LATEST:
// input/output error" and exited 1, while LATEST named the new archive: the exit code, stderr
// and the metrics say the set still holds the old backup, and the next run of a monitor
// trusts that.
// Correct: whatever lstat of LATEST fails, what the run says of LATEST is what LATEST holds:
// "LATEST -> NAME" (exit 0) when it names the new archive, the old name when it says "not
// moved".
func TestAttackSweepLatestStatEIOAfterMoveSaysNotMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	latest := filepath.Join(set, "LATEST")
	for k := 1; k <= 8; k++ {
		old, err := os.ReadFile(latest)
		if err != nil {
			t.Fatal(err)
		}
		r := straceRun(t, dir, latest, "newfstatat", fmt.Sprintf("newfstatat:error=EIO:when=%d", k),
			"create", "--output-dir", set, "app")
		now, err := os.ReadFile(latest)
		if err != nil {
			t.Fatal(err)
		}
		moved := string(now) != string(old)
		if moved && (r.code != exitComplete || strings.Contains(r.stderr, "LATEST not moved")) {
			t.Errorf("lstat %d of LATEST failed (EIO): LATEST moved from %q to %q, but exit %d:\n%s", k, old, now, r.code, r.stderr)
		}
		// A run that failed before it began (strace counts each thread's calls, so the kth
		// may be the lock's look at the set) says so, and so that nothing moved.
		failedFirst := r.code == exitFailed && strings.Contains(r.stderr, "backup: failed: lstat "+latest)
		if !moved && !strings.Contains(r.stderr, "LATEST not moved") && !failedFirst {
			t.Errorf("lstat %d of LATEST failed (EIO): LATEST still %q, exit %d:\n%s", k, old, r.code, r.stderr)
		}
	}
}

// TestAttackSweepTargetStatEIOSaysMissing: a set run looks up the archive LATEST names, to
// copy its unchanged files (and, before LATEST moves, the new archive, to activate it). The
// lstat of that archive fails (EIO, every lstat of its path). create said "LATEST: names
// app-….zip: the archive is missing" (and, for the new archive, "not activating …: the
// archive is missing", exit 1): an archive that is there, said to be gone, and the I/O error
// nowhere. The same lookup told status, restore and prune so.
// Correct: the lookup that failed is said as it failed ("lstat …: input/output error").
func TestAttackSweepTargetStatEIOSaysMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	name, err := os.ReadFile(filepath.Join(set, "LATEST"))
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(set, strings.TrimSpace(string(name)))
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // the new run's name is another
	r := straceRun(t, dir, archive, "newfstatat", "newfstatat:error=EIO:when=1+", "create", "--output-dir", set, "app")
	if _, err := os.Stat(archive); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.stderr, "missing") || !strings.Contains(r.stderr, "input/output error") {
		t.Errorf("every lstat of %s failed (EIO), the archive is there; create says (exit %d):\n%s", archive, r.code, r.stderr)
	}
}

// TestAttackSweepPublishStatEIOSaysExists: create --force -o out.zip over an old out.zip.
// Publishing the new archive lstats out.zip to choose between swapping with the old file
// (RENAME_EXCHANGE) and a rename into a free name (RENAME_NOREPLACE); that lstat fails (EIO,
// the 3rd or 5th lstat of out.zip on the thread that makes it). Publish took the failure for
// "no file there", renamed with RENAME_NOREPLACE, met the old file (EEXIST) and create said
// "output …/out.zip exists (use --force to replace it)", exit 1, to a run given --force,
// the I/O error nowhere. (The same lstat publishes LATEST, a receipt, a metrics file: there
// "rename …: file exists".)
// Correct: the lstat's error is the cause said ("lstat …/out.zip: input/output error").
func TestAttackSweepPublishStatEIOSaysExists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	out := filepath.Join(dir, "out.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "app"), exitComplete)
	for k := 1; k <= 12; k++ {
		r := straceRun(t, dir, out, "newfstatat", fmt.Sprintf("newfstatat:error=EIO:when=%d", k), "create", "-q", "--force", "-o", out, "app")
		if strings.Contains(r.stderr, "file exists") {
			t.Errorf("lstat %d of out.zip failed (EIO), and create --force says (exit %d):\n%s", k, r.code, r.stderr)
		}
		if r.code != exitComplete && !strings.Contains(r.stderr, "input/output error") {
			t.Errorf("lstat %d of out.zip failed (EIO): exit %d without the error:\n%s", k, r.code, r.stderr)
		}
	}
}

// TestAttackSweepRestoreStatEIOSaysReplaced: restore into an empty DEST, each run failing
// one fstatat (EIO, the Nth of the thread that makes it, N from 1 to 40). Where the failed
// lstat was a check of the restore's own work (its temp file before the rename, the
// symlink it made, the file just renamed into place), the restore said "its temp file was
// replaced in the destination during the restore; what is there now is left as it is" or
// "was changed or replaced in the destination during the restore": someone's doing, when no
// one touched DEST, and the I/O error nowhere. A temp file so judged someone else's was left
// (.link.restore-…), and no later restore removed it: the rerun's DEST held it still.
// Correct: a check that cannot be made fails the entry with its error; the restore's own
// temp file is removed (or stays in its journal for the next restore to remove).
func TestAttackSweepRestoreStatEIOSaysReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f1": {content: "1\n"}, "f2": {content: "2\n"},
		"sub/f3": {content: "3\n"}, "link": {kind: "symlink", content: "f1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", "a.zip", "app"), exitComplete)
	want := []string{"app", "app/f1", "app/f2", "app/link", "app/sub", "app/sub/f3"}
	for n := 1; n <= 40; n++ {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d", n))
		r := straceRun(t, dir, "", "newfstatat", fmt.Sprintf("newfstatat:error=EIO:when=%d", n), "restore", "--symlinks", "store", "a.zip", dest)
		if strings.Contains(r.stderr, "replaced") {
			t.Errorf("fstatat %d failed (EIO), no one touched DEST, and restore says (exit %d):\n%s", n, r.code, r.stderr)
		}
		if _, err := os.Stat(dest); err != nil {
			continue
		}
		mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--no-undo", "--symlinks", "store", "a.zip", dest), exitComplete)
		var got []string
		filepath.WalkDir(dest, func(p string, _ os.DirEntry, err error) error {
			if rel, _ := filepath.Rel(dest, p); err == nil && rel != "." {
				got = append(got, rel)
			}
			return nil
		})
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("fstatat %d failed (EIO); after a restore again DEST holds %q, want %q", n, got, want)
		}
	}
}

// TestAttackSweepSetNameLookupEIOTakesUsedName: a set run starts in a second whose first
// name a run holds (app-…Z.zip), and every lstat of that name fails (EIO). Listing the
// folder fails on it, and the name picker, falling back to looking each name up, took the
// name whose lookup failed ("writing it will say what is wrong"): the run read and wrote
// everything, then failed at its end with "output …Z.zip exists (use --force to replace
// it)", advice to replace a good backup, for a name it chose itself.
// (The first name of each second of the next minute is taken beforehand and looked up with
// EIO, so that whatever second the run starts in, its first name is.)
// Correct: a name whose lookup fails may be used: it is passed over, and a free one taken.
func TestAttackSweepSetNameLookupEIOTakesUsedName(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	opts := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=newfstatat", "-e", "inject=newfstatat:error=EIO:when=1+"}
	now := time.Now()
	for s := range 60 {
		taken := filepath.Join(set, backupset.ArchiveName("app", now.Add(time.Duration(s)*time.Second), 1))
		if f, err := os.OpenFile(taken, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			f.Close() // the first run's own is left as it is
		}
		opts = append(opts, "-P", taken)
	}
	cmd := exec.Command("strace", append(append(opts, binary), "create", "-q", "--output-dir", set, "app")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	r := runCmd(t, cmd)
	if r.code != exitComplete || strings.Contains(r.stderr, "use --force") {
		t.Errorf("the lookup of the second's first name failed (EIO): exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestAttackSweepRestoreGetwdEIOIsUsage: restore --force --undo-dir DIR, whose check of
// the before-state's folder makes DEST absolute; the current folder's stat in getwd fails
// (EIO, the first fstatat of "."). restore said "stat .: input/output error" and "Run
// 'backup help restore' for usage.", exit 2: an I/O error told as a usage error, which
// README's table keeps for bad flags and arguments.
// Correct: nothing is wrong with the command line: the restore goes on (the folder is
// looked up again when the before-state is written), or fails with exit 1, not 2.
func TestAttackSweepRestoreGetwdEIOIsUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	r := straceRun(t, dir, ".", "newfstatat", "newfstatat:error=EIO:when=1", "restore", "--force", "--undo-dir", ".", "a.zip", "dest")
	if r.code == 2 || strings.Contains(r.stderr, "for usage") {
		t.Errorf("the stat of the current folder failed (EIO), the command line is right, and restore says (exit %d):\n%s", r.code, r.stderr)
	}
}

// TestAttackSweepSetStatEIOSaysDirectory: verify (list, restore) SET, whose stat of the
// argument, to tell a set's folder from an archive file, fails (EIO). The failure was taken
// for "not a folder", the argument opened as an archive file, and verify said "set: is a
// directory", exit 1: of a set's folder, as if the user had named a folder that is no set,
// the I/O error nowhere.
// Correct: the stat's error is what is said ("stat set: input/output error").
func TestAttackSweepSetStatEIOSaysDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	for _, args := range [][]string{{"verify", "set"}, {"list", "set"}, {"restore", "set", "dest"}} {
		r := straceRun(t, dir, "set", "newfstatat", "newfstatat:error=EIO:when=1", args...)
		if r.code != exitFailed || strings.Contains(r.stderr, "is a directory") || !strings.Contains(r.stderr, "input/output error") {
			t.Errorf("%s: the stat of the set's folder failed (EIO): exit %d, stderr:\n%s", args[0], r.code, r.stderr)
		}
	}
}
