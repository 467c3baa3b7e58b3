package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackJobsFolderEntryDiskFull: an archive of 40 empty folders restored by 4 workers
// into a DEST whose inode table is full after a dozen. The folder entries met after it
// filled up each failed on their own, one line each ("app/e20/: app/e20: no space left on
// device (not restored)"), and the restore went on to the next, then ended "incomplete"
// with exit 3, as if a few folders had been refused; the same with --jobs 1. A full disk
// stops a restore (restore.md: "`failed` on a full disk", as it does at a file's first
// write): exit 1, status failed, the cause said once, nothing listed as failed, and the
// counts those of what is in DEST. Once there is room, running it again finishes it.
func TestAttackJobsFolderEntryDiskFull(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	for i := range 40 {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("app/e%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	mountTmpfs(t, full, "1m,nr_inodes=16")
	dest := filepath.Join(full, "dest")
	for _, jobs := range []string{"4", "1"} {
		os.RemoveAll(dest)
		r := backup(t, runOpts{dir: dir}, "restore", "--jobs", jobs, "--json", arch, dest)
		out := restoreJSONOf(t, r)
		if r.code != exitFailed || out.Status != restoreFailed || len(out.Failed) != 0 || !strings.Contains(out.Error, "no space left on device") {
			t.Errorf("--jobs %s: exit %d, status %s, %d entries failed, error %q; want 1, failed, none, the cause\n%s",
				jobs, r.code, out.Status, len(out.Failed), out.Error, r.stderr)
		}
		if n := strings.Count(r.stderr, "no space left on device"); n != 1 {
			t.Errorf("--jobs %s: the cause said %d times, want once:\n%s", jobs, n, r.stderr)
		}
		if got := len(listTree(t, dest)); got != out.Dirs {
			t.Errorf("--jobs %s: %d folders in DEST, --json counts %d", jobs, got, out.Dirs)
		}
	}
	if err := syscall.Mount("tmpfs", full, "tmpfs", syscall.MS_REMOUNT, "size=1m,nr_inodes=100"); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--jobs", "4", "--json", arch, dest)
	if got := len(listTree(t, dest)); r.code != exitComplete || got != 41 {
		t.Errorf("the run again with room: exit %d, %d folders in DEST; want 0 and all 41\n%s", r.code, got, r.stderr)
	}
}

// TestAttackJobsPlacedStatEIOSaysReplaced: a worker links its checked file app/victim into
// place, then checks that the name holds it (an lstat), and that lstat fails (EIO). The
// entry failed as "was changed or replaced in the destination during the restore; what is
// there now is left as it is": an I/O error said as someone's swap, of a file that this run
// put there from its own descriptor. Correct: the entry fails with the error as it is (exit
// 3), as restore.md says of a check that cannot be made ("a check that cannot be made ...
// fails them with that error ..., which says nothing of a move").
func TestAttackJobsPlacedStatEIOSaysReplaced(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	nodes := map[string]node{"app/victim": {content: "v\n"}}
	for i := range 6 {
		nodes[fmt.Sprintf("app/f%d", i)] = node{content: fmt.Sprintf("%d\n", i)}
	}
	makeTree(t, dir, nodes)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	// DEST is missing, so the plan asks nothing of it: the first lstat of victim is the one
	// after its link.
	r := straceRun(t, dir, "victim", "newfstatat", "newfstatat:error=EIO:when=1", "restore", "--jobs", "4", arch, "dest")
	if r.code != exitIncomplete || strings.Contains(r.stderr, "changed or replaced") ||
		!strings.Contains(r.stderr, "app/victim: ") || !strings.Contains(r.stderr, "input/output error") {
		t.Errorf("the lstat of app/victim after its link failed (EIO): exit %d, stderr:\n%s\nwant %d and the error as it is", r.code, r.stderr, exitIncomplete)
	}
}

// TestAttackJobsLinkGroupStatEIOSaysOutside: a hard-link group of two members (app/victim,
// app/sub/victim2), each written by a worker as a file of its own, is linked again once the
// workers are done; first each member's names are counted (an lstat), so that no restored
// name joins a file with names outside the group. That lstat of app/victim fails (EIO): the
// warning said "restored as a separate file, not a hard link of app/victim: app/victim has
// names outside the group", of a file this run had just made with one name. Correct: the
// members stay separate files (nothing is known of that one), and the warning says why: the
// I/O error, as it is. (Strace counts each thread's calls apart: the test runs until the
// lstat that fails is that one.)
func TestAttackJobsLinkGroupStatEIOSaysOutside(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	arch := victimLinkArchive(t, dir, map[string]node{"app/victim": {content: "v\n"}, "app/f": {content: "f\n"}, "app/sub/other": {content: "o\n"}})
	for try := range 30 {
		os.RemoveAll(filepath.Join(dir, "dest"))
		r := straceRun(t, dir, "victim", "newfstatat", fmt.Sprintf("newfstatat:error=EIO:when=%d", 2+try%2), "restore", "--jobs", "4", arch, "dest")
		switch {
		case strings.Contains(r.stderr, "names outside the group"):
			t.Fatalf("an lstat of app/victim failed (EIO) as relink counted its names; exit %d, stderr:\n%s", r.code, r.stderr)
		case strings.Contains(r.stderr, "lstat: input/output error") && strings.Contains(r.stderr, "restored as a separate file"):
			if r.code != exitComplete {
				t.Errorf("exit %d, want %d (a warning):\n%s", r.code, exitComplete, r.stderr)
			}
			return
		}
	}
	t.Skip("strace never failed the lstat with which relink counts app/victim's names")
}

// TestAttackJobsReadOnlyDestFixes: DEST, on a file system mounted read-only, holds every file
// of the archive, 30 of them with another mtime. Restored by 4 workers, each of the 30 kept
// files failed on its own when its owner, mode and mtime were set ("app/f00: chown:
// read-only file system (not restored)", 30 lines), and the restore ended incomplete (exit
// 3). A read-only file system stops a restore (restore.go's fatalErrnos: every entry after
// the first would fail the same way), as it does at a file's write: exit 1, status failed,
// the cause said once.
func TestAttackJobsReadOnlyDestFixes(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	nodes := map[string]node{}
	for i := range 30 {
		nodes[fmt.Sprintf("app/f%02d", i)] = node{content: fmt.Sprintf("%d\n", i)}
	}
	makeTree(t, dir, nodes)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o755)
	mountTmpfs(t, ro, "1m")
	dest := filepath.Join(ro, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for name := range nodes {
		if err := os.Chtimes(filepath.Join(dest, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount("tmpfs", ro, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=1m"); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--jobs", "4", "--json", arch, dest)
	out := restoreJSONOf(t, r)
	if r.code != exitFailed || out.Status != restoreFailed || len(out.Failed) != 0 || !strings.Contains(out.Error, "read-only file system") {
		t.Errorf("exit %d, status %s, %d entries failed, error %q; want 1, failed, none, the cause\n%s",
			r.code, out.Status, len(out.Failed), out.Error, r.stderr)
	}
	if n := strings.Count(r.stderr, "read-only file system"); n != 1 {
		t.Errorf("the cause said %d times, want once:\n%s", n, r.stderr)
	}
}

// TestAttackJobsReadOnlyDestFolders: as TestAttackJobsReadOnlyDestFixes, with the files as
// recorded and 20 folders of another mtime: once the workers are done, each folder failed
// on its own when its owner, mode and mtime were set ("app/d00/: chown: read-only file
// system (not restored)", 20 lines), exit 3. Correct: the first stops the restore, exit 1,
// failed, the cause said once.
func TestAttackJobsReadOnlyDestFolders(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	nodes := map[string]node{}
	for i := range 20 {
		nodes[fmt.Sprintf("app/d%02d/f", i)] = node{content: fmt.Sprintf("%d\n", i)}
	}
	makeTree(t, dir, nodes)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o755)
	mountTmpfs(t, ro, "1m")
	dest := filepath.Join(ro, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 20 {
		if err := os.Chtimes(filepath.Join(dest, fmt.Sprintf("app/d%02d", i)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount("tmpfs", ro, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=1m"); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--jobs", "4", "--json", arch, dest)
	out := restoreJSONOf(t, r)
	if r.code != exitFailed || out.Status != restoreFailed || len(out.Failed) != 0 || !strings.Contains(out.Error, "read-only file system") {
		t.Errorf("exit %d, status %s, %d entries failed, error %q; want 1, failed, none, the cause\n%s",
			r.code, out.Status, len(out.Failed), out.Error, r.stderr)
	}
	if n := strings.Count(r.stderr, "read-only file system"); n != 1 {
		t.Errorf("the cause said %d times, want once:\n%s", n, r.stderr)
	}
}

// TestAttackJobsTempCheckEIOLeavesTemp: a symlink is made under a temp name
// (.lnk.restore-…), recorded first in the run's journal, and its name is checked (an lstat)
// to hold it still before its mtime is set and before its rename. That lstat fails (EIO):
// the entry failed as "its temp file was replaced in the destination during the restore;
// what is there now is left as it is", and the temp symlink, this run's own, stayed in DEST
// while the journal, which no longer listed it, was removed: no later restore removes it.
// Correct: the entry fails with the error as it is, and the temp name stays in the journal
// until it is removed (at the end of the run, once it is seen to be this run's, or by the
// next restore): nothing of the run's is left unrecorded. (Strace counts each thread's calls
// apart: the test fails each lstat in turn, by its number.)
func TestAttackJobsTempCheckEIOLeavesTemp(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "f\n"}, "app/lnk": {kind: "symlink", content: "f"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	hit := false
	for try := 0; try < 4*40 && !hit; try++ {
		n := 1 + try%40
		os.RemoveAll(dest)
		r := straceRun(t, dir, "", "newfstatat", fmt.Sprintf("newfstatat:error=EIO:when=%d", n), "restore", "--jobs", "4", arch, dest)
		var temps, journals []string
		for _, name := range listTree(t, dest) {
			switch base := filepath.Base(strings.TrimRight(name, "@/")); {
			case strings.HasPrefix(base, ".backup-restore-"):
				journals = append(journals, name)
			case strings.HasPrefix(base, "."):
				temps = append(temps, name)
			}
		}
		if len(temps) > 0 && len(journals) == 0 {
			t.Fatalf("lstat number %d failed (EIO): %q left in DEST, and no journal lists it; exit %d, stderr:\n%s", n, temps, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "replaced in the destination during the restore") {
			t.Fatalf("lstat number %d failed (EIO), and nothing was replaced; exit %d, stderr:\n%s", n, r.code, r.stderr)
		}
		hit = hit || strings.Contains(r.stderr, "app/lnk: check its temp file: lstat: input/output error")
	}
	if !hit {
		t.Skip("strace never failed the lstat of the temp symlink")
	}
}

// TestAttackJobsFolderFstatEIOSaysMoved: while the move guard is quiet, a worker checks the
// folder it holds open before each file it puts there with an fstat of its descriptor (a
// folder removed while open has no link left). That fstat fails (EIO): the file failed as
// "app was moved or replaced during the restore", an I/O error said as someone's move.
// restore.md: "a check that cannot be made (the fstatat fails, an I/O error) fails them with
// that error …, which says nothing of a move". Correct: that error, as it is (exit 3).
func TestAttackJobsFolderFstatEIOSaysMoved(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	nodes := map[string]node{}
	for i := range 6 {
		nodes[fmt.Sprintf("app/f%d", i)] = node{content: fmt.Sprintf("%d\n", i)}
	}
	makeTree(t, dir, nodes)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	hit := false
	for try := 0; try < 4*4 && !hit; try++ {
		n := 2 + try%4
		os.RemoveAll(dest)
		r := straceRun(t, dir, filepath.Join(dest, "app"), "fstat", fmt.Sprintf("fstat:error=EIO:when=%d", n), "restore", "--jobs", "4", arch, dest)
		if strings.Contains(r.stderr, "moved or replaced") {
			t.Fatalf("fstat number %d of the folder app failed (EIO): exit %d, stderr:\n%s\nwant %d and the error as it is", n, r.code, r.stderr, exitIncomplete)
		}
		if hit = strings.Contains(r.stderr, "input/output error"); hit && r.code != exitIncomplete {
			t.Errorf("fstat number %d of the folder app failed (EIO): exit %d, want %d:\n%s", n, r.code, exitIncomplete, r.stderr)
		}
	}
	if !hit {
		t.Skip("strace never failed an fstat of the folder app")
	}
}

// TestAttackJobsRelinkHandleEIOSaysReplaced: the members of a hard-link group (app/sub/victim2,
// the first, and app/victim) are written by two workers; relink then links app/victim to
// the file app/sub/victim2's name holds, once that is checked to be the very file placed
// there: its identity, then its file handle (name_to_handle_at). That call fails (EIO): the
// warning said "restored as a separate file, not a hard link of app/sub/victim2:
// app/sub/victim2 was changed or replaced in the destination during the restore", of a file
// nobody touched. Correct: the members stay separate copies, and the warning gives the
// error as it is. (Strace counts each thread's calls apart: the test tries until the call
// that fails is relink's.)
func TestAttackJobsRelinkHandleEIOSaysReplaced(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	arch := victimLinkArchive(t, dir, map[string]node{"app/victim": {content: "v\n"}, "app/f": {content: "f\n"}})
	for try := range 30 {
		os.RemoveAll(filepath.Join(dir, "dest"))
		r := straceRun(t, dir, "victim2", "name_to_handle_at", fmt.Sprintf("name_to_handle_at:error=EIO:when=%d", 1+try%2), "restore", "--jobs", "4", arch, "dest")
		switch {
		case strings.Contains(r.stderr, "changed or replaced"):
			t.Fatalf("a name_to_handle_at of app/sub/victim2 failed (EIO); exit %d, stderr:\n%s", r.code, r.stderr)
		case strings.Contains(r.stderr, "not a hard link of app/sub/victim2") && strings.Contains(r.stderr, "input/output error"):
			if r.code != exitComplete {
				t.Errorf("exit %d, want %d (a warning):\n%s", r.code, exitComplete, r.stderr)
			}
			return
		}
	}
	t.Skip("strace never failed relink's name_to_handle_at of app/sub/victim2")
}

// TestAttackJobsForceDisplacedStatEIOSaysReplaced: restore --force exchanges its checked
// temp file with the file at app/f (RENAME_EXCHANGE), then checks with an lstat that what
// came out to the temp name is the file its plan saw. That lstat fails (EIO): the exchange
// is undone, and the entry failed as "was changed or replaced in the destination during the
// restore", of a file nobody touched. Undoing it is right (nothing is known of what came
// out), the words are not. Correct: the entry fails with the error as it is (exit 3), and
// app/f holds what it held. (Strace counts each thread's calls apart: the test fails each
// lstat in turn, by its number.)
func TestAttackJobsForceDisplacedStatEIOSaysReplaced(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "f\n"}, "app/g": {content: "g\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	hit := false
	for try := 0; try < 4*40 && !hit; try++ {
		n := 1 + try%40
		os.RemoveAll(dest)
		makeTree(t, dest, map[string]node{"app/f": {content: "mine\n"}})
		r := straceRun(t, dir, "", "newfstatat", fmt.Sprintf("newfstatat:error=EIO:when=%d", n),
			"restore", "--force", "--no-undo", "--jobs", "4", arch, dest)
		if strings.Contains(r.stderr, "replaced in the destination during the restore") {
			t.Fatalf("lstat number %d failed (EIO), and nothing was replaced; exit %d, stderr:\n%s", n, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "app/f: check what it replaced: lstat: input/output error") {
			hit = true
			if r.code != exitIncomplete {
				t.Errorf("exit %d, want %d:\n%s", r.code, exitIncomplete, r.stderr)
			}
			assertContent(t, filepath.Join(dest, "app/f"), "mine\n")
		}
	}
	if !hit {
		t.Skip("strace never failed the lstat of what the exchange took out")
	}
}

// TestAttackJobsDiskFullLeavesLinksSplit: app/a and app/b are one file (hard links) and
// app/zbig does not fit in DEST. The workers write a and b, each a file of its own, then
// zbig fills the disk and the restore stops (exit 1) before the group is linked again. Once
// there is room, running it again finds a and b in place, each a file of its own with the
// recorded bytes, and keeps them so for ever ("app/b: restored as a separate file, not a
// hard link of app/a: it was there already as a file of its own", on every run after).
// restore.md: a restore stopped by a full disk "is finished by running it again". Correct:
// the members a stopped run wrote are linked again before it returns, so that the run
// again finds them one file; after it, a and b are one file and nothing warns.
func TestAttackJobsDiskFullLeavesLinksSplit(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a": {content: "same\n"}, "app/zbig": {content: randomString(t, 1500000)}})
	if err := os.Link(filepath.Join(dir, "app/a"), filepath.Join(dir, "app/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	for _, jobs := range []string{"1", "4"} {
		full := filepath.Join(dir, "full"+jobs)
		os.Mkdir(full, 0o755)
		mountTmpfs(t, full, "1m")
		dest := filepath.Join(full, "dest")
		if r := backup(t, runOpts{dir: dir}, "restore", "--jobs", jobs, arch, dest); r.code != exitFailed || !strings.Contains(r.stderr, "no space left on device") {
			t.Fatalf("--jobs %s: exit %d, want %d and a full disk:\n%s", jobs, r.code, exitFailed, r.stderr)
		}
		if err := syscall.Mount("tmpfs", full, "tmpfs", syscall.MS_REMOUNT, "size=8m"); err != nil {
			t.Fatal(err)
		}
		r := backup(t, runOpts{dir: dir}, "restore", "--jobs", jobs, arch, dest)
		a, err1 := os.Stat(filepath.Join(dest, "app/a"))
		b, err2 := os.Stat(filepath.Join(dest, "app/b"))
		if r.code != exitComplete || strings.Contains(r.stderr, "warning") || err1 != nil || err2 != nil || !os.SameFile(a, b) {
			t.Errorf("--jobs %s, the run again with room: exit %d, app/a and app/b one file: %v (%v %v); want 0, one file, no warning:\n%s",
				jobs, r.code, err1 == nil && err2 == nil && os.SameFile(a, b), err1, err2, r.stderr)
		}
	}
}

// victimLinkArchive lays out nodes in dir, makes app/sub/victim2 another name of
// app/victim (a hard-link group), and backs up app into dir/a.zip.
func victimLinkArchive(t *testing.T, dir string, nodes map[string]node) string {
	t.Helper()
	makeTree(t, dir, nodes)
	os.MkdirAll(filepath.Join(dir, "app/sub"), 0o755)
	if err := os.Link(filepath.Join(dir, "app/victim"), filepath.Join(dir, "app/sub/victim2")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	return arch
}
