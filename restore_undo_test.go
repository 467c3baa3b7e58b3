package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// undoFixture is a DEST that an older backup was restored into and then changed, and a
// newer backup of the source to restore over it with --force.
type undoFixture struct {
	dir, dest, arch string
}

func newUndoFixture(t *testing.T) undoFixture {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{
		"same.txt":    {content: "same\n"},
		"changed.txt": {content: "old\n"},
		"mode.txt":    {content: "mode\n", mode: 0o644},
		"sub/kept":    {content: "kept\n"},
	})
	f := undoFixture{dir: dir, dest: filepath.Join(dir, "dest"), arch: filepath.Join(dir, "new.zip")}
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "old.zip", "app"); r.code != exitComplete {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	if r := backup(t, runOpts{dir: dir}, "restore", "-q", "old.zip", f.dest); r.code != exitComplete {
		t.Fatalf("restore: %d %s", r.code, r.stderr)
	}
	// DEST drifts: files changed, a mode changed, a file added that no backup holds.
	old := time.Date(2020, 1, 2, 3, 4, 5, 678, time.UTC)
	in := filepath.Join(f.dest, "app")
	os.WriteFile(filepath.Join(in, "changed.txt"), []byte("edited in DEST\n"), 0o644)
	os.Chtimes(filepath.Join(in, "changed.txt"), old, old)
	os.Chmod(filepath.Join(in, "mode.txt"), 0o600)
	os.WriteFile(filepath.Join(in, "sub/kept"), []byte("KEPT\n"), 0o644) // the same size: only the SHA-256 tells
	os.WriteFile(filepath.Join(in, "sub/local"), []byte("only in DEST\n"), 0o640)
	// The newer backup: a file changed, new files in a new folder.
	makeTree(t, src, map[string]node{
		"new/deep/n.txt": {content: "new\n"},
		"new/m.txt":      {content: "new too\n"},
	})
	os.WriteFile(filepath.Join(src, "changed.txt"), []byte("newest\n"), 0o644)
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", f.arch, "app"); r.code != exitComplete {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	return f
}

// snapshot copies DEST, modes and mtimes kept, to compare with later.
func (f undoFixture) snapshot(t *testing.T) string {
	t.Helper()
	saved := filepath.Join(f.dir, "saved")
	if out, err := exec.Command("cp", "-a", f.dest, saved).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	return saved
}

func restoreJSONOf(t *testing.T, r result) restoreJSON {
	t.Helper()
	var out restoreJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v (stderr %s)", r.stdout, err, r.stderr)
	}
	return out
}

// TestRestoreForceUndo restores over a changed DEST with --force, then undoes it by
// restoring the before-state with --force: DEST is what it was, byte for byte, modes and
// mtimes included; the paths the restore created are gone.
func TestRestoreForceUndo(t *testing.T) {
	t.Parallel()
	f := newUndoFixture(t)
	saved := f.snapshot(t)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--json", f.arch, f.dest)
	out := restoreJSONOf(t, r)
	if r.code != exitComplete || out.Undo == nil {
		t.Fatalf("restore --force: exit %d, undo %v\n%s", r.code, out.Undo, r.stderr)
	}
	// changed.txt and sub/kept replaced, two new files; same.txt and mode.txt were there
	// already (mode.txt's mode set).
	if out.Files != 4 || out.AlreadyPresent != 2 {
		t.Errorf("files %d, already_present %d; want 4 and 2", out.Files, out.AlreadyPresent)
	}
	assertContent(t, filepath.Join(f.dest, "app/new/deep/n.txt"), "new\n")
	if filepath.Dir(out.Undo.Archive) != f.dir || out.Undo.Receipt != out.Undo.Archive+".receipt.json" {
		t.Errorf("before-state %+v, want it in DEST's parent %s, the receipt beside it", out.Undo, f.dir)
	}
	if rc := readReceipt(t, out.Undo.Receipt); rc.Status != "complete" {
		t.Errorf("before-state receipt status %q", rc.Status)
	}
	unzipTest(t, out.Undo.Archive)
	if r := backup(t, runOpts{dir: f.dir}, "verify", out.Undo.Archive); r.code != exitComplete {
		t.Errorf("verify of the before-state: exit %d %s", r.code, r.stderr)
	}
	held := readZipGo(t, out.Undo.Archive)
	for _, name := range []string{"app/changed.txt", "app/mode.txt", "app/sub/kept"} {
		if _, ok := held[name]; !ok {
			t.Errorf("before-state lacks %s: holds %v", name, keys(held))
		}
	}
	if _, ok := held["app/same.txt"]; ok {
		t.Error("before-state holds app/same.txt, which the restore did not change")
	}

	// Without --force, what the undo would replace or remove is a conflict: nothing changes.
	r = backup(t, runOpts{dir: f.dir}, "restore", "--json", out.Undo.Archive, f.dest)
	refused := restoreJSONOf(t, r)
	if r.code != exitFailed || !slices.Contains(refused.Conflicts, "app/changed.txt") || !slices.Contains(refused.Conflicts, "app/new/m.txt") {
		t.Errorf("undo without --force: exit %d, conflicts %q; want 1, app/changed.txt and app/new/m.txt among them", r.code, refused.Conflicts)
	}
	assertContent(t, filepath.Join(f.dest, "app/new/m.txt"), "new too\n")

	r = backup(t, runOpts{dir: f.dir}, "restore", "--force", "--json", out.Undo.Archive, f.dest)
	undo := restoreJSONOf(t, r)
	if r.code != exitComplete || undo.Removed != 4 { // new, new/deep, new/deep/n.txt, new/m.txt
		t.Fatalf("undo: exit %d, removed %d, want 4\n%s", r.code, undo.Removed, r.stderr)
	}
	compareTrees(t, filepath.Join(saved, "app"), filepath.Join(f.dest, "app"))
}

// TestRestoreUndoKeepsChangedFiles: a file the restore created and someone changed since is
// not removed by the undo, with a warning naming it.
func TestRestoreUndoKeepsChangedFiles(t *testing.T) {
	t.Parallel()
	f := newUndoFixture(t)
	out := restoreJSONOf(t, backup(t, runOpts{dir: f.dir}, "restore", "--force", "--json", f.arch, f.dest))
	if out.Undo == nil {
		t.Fatal("no before-state")
	}
	edited := filepath.Join(f.dest, "app/new/m.txt")
	os.WriteFile(edited, []byte("edited after the restore\n"), 0o644)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", out.Undo.Archive, f.dest)
	if r.code != exitComplete {
		t.Fatalf("undo: exit %d\n%s", r.code, r.stderr)
	}
	assertContent(t, edited, "edited after the restore\n")
	for _, want := range []string{
		"warning: app/new/m.txt: created by the restore undone, not removed: changed since the restore wrote it",
		"warning: app/new: created by the restore undone, not removed: the folder is not empty",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dest, "app/new/deep")); !os.IsNotExist(err) {
		t.Errorf("app/new/deep, created and unchanged, still there: %v", err)
	}
}

// TestRestoreBeforeStateDiskFull: when the before-state cannot be written (its folder a full
// tmpfs), restore --force changes nothing in DEST, leaves nothing behind, and exits 1;
// with --no-undo it restores without one.
func TestRestoreBeforeStateDiskFull(t *testing.T) {
	mustRoot(t)
	f := newUndoFixture(t)
	big := randomString(t, 256<<10) // does not compress: more than the tmpfs holds
	os.WriteFile(filepath.Join(f.dest, "app/changed.txt"), []byte(big), 0o644)
	full := filepath.Join(f.dir, "full")
	os.Mkdir(full, 0o755)
	mountTmpfs(t, full, "64k")
	saved := f.snapshot(t)

	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--json", "--undo-dir", full, f.arch, f.dest)
	out := restoreJSONOf(t, r)
	if r.code != exitFailed || out.Status != restoreFailed || out.Undo != nil {
		t.Fatalf("exit %d, %+v; want 1, failed, no undo\n%s", r.code, out, r.stderr)
	}
	if !strings.Contains(r.stderr, "no space left on device") || !strings.Contains(r.stderr, "nothing restored (--no-undo restores without one)") {
		t.Errorf("stderr %q, want the cause and the way out", r.stderr)
	}
	compareTrees(t, filepath.Join(saved, "app"), filepath.Join(f.dest, "app"))
	if left := listDir(t, full); len(left) != 0 {
		t.Errorf("left in the undo folder: %v", left)
	}

	r = backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", "--json", f.arch, f.dest)
	if out := restoreJSONOf(t, r); r.code != exitComplete || out.Undo != nil {
		t.Fatalf("--no-undo: exit %d, undo %v\n%s", r.code, out.Undo, r.stderr)
	}
	assertContent(t, filepath.Join(f.dest, "app/changed.txt"), "newest\n")
	if got := listDir(t, f.dir); strings.Contains(strings.Join(got, " "), "before-restore") {
		t.Errorf("--no-undo wrote a before-state: %v", got)
	}
}

// TestAttackUndoDestDotDotAfterSymlink: DEST given as "D/s/t/lnk/..", lnk a symlink to
// D/q: the kernel resolves DEST to D, and the restore writes into D (it replaced D/app/a.txt).
// The before-state was read from the name cleaned lexically, D/s/t: it saved D/s/t/app/a.txt
// (another file) instead of the D/app/a.txt it replaced, so the user's file was gone and
// the printed undo put back the other file's bytes. It was also written into D/s, inside
// the DEST the restore wrote into ("never inside DEST"). Without D/s/t/app the restore
// failed instead ("before-state: source D/s/t/app: no such file or directory").
func TestAttackUndoDestDotDotAfterSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "hello\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)

	d := filepath.Join(dir, "D")
	makeTree(t, d, map[string]node{
		"app/a.txt":     {content: "the user's file\n"},
		"q":             {kind: "dir"},
		"s/t/app/a.txt": {content: "another file\n"},
	})
	if err := os.Symlink(filepath.Join(d, "q"), filepath.Join(d, "s/t/lnk")); err != nil {
		t.Fatal(err)
	}
	dest := "D/s/t/lnk/.."
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", arch, dest)
	mustExit(t, r, exitComplete)
	if got := string(readFile(t, filepath.Join(d, "app/a.txt"))); got != "hello\n" {
		t.Fatalf("restore --force into %s did not write D/app/a.txt (%q): the test's premise is gone", dest, got)
	}
	var out struct {
		Undo struct{ Archive string } `json:"undo"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Undo.Archive == "" {
		t.Fatalf("restore --json: %v, no undo in %q", err, r.stdout)
	}
	if rel, err := filepath.Rel(d, out.Undo.Archive); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("the before-state %s was written inside DEST %s (which is %s)", out.Undo.Archive, dest, d)
	}
	saved := readZip(t, out.Undo.Archive)
	if got := saved["app/a.txt"]; got != "the user's file\n" {
		t.Errorf("the before-state holds app/a.txt as %q, not the %q the restore replaced", got, "the user's file\n")
	}
	r = backup(t, runOpts{dir: dir}, "restore", "--force", out.Undo.Archive, dest)
	if got := string(readFile(t, filepath.Join(d, "app/a.txt"))); got != "the user's file\n" {
		t.Errorf("the undo (exit %d) left D/app/a.txt holding %q: the user's file is lost", r.code, got)
	}
}

// TestRestoreUndoFlagsInJSON: the undo of a restore --force --xattrs --numeric-owner needs
// those flags to put back what it replaced as it was; --json's "undo" gives them, as the
// printed undo command carries them, and leaves out --no-same-owner (the undo gives back
// the replaced files' owners).
func TestRestoreUndoFlagsInJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", "--xattrs", "--numeric-owner", "--no-same-owner", arch, dest)
	mustExit(t, r, exitComplete)
	var out struct {
		Undo map[string]string `json:"undo"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("restore --json: %v: %q", err, r.stdout)
	}
	if got, want := out.Undo["flags"], "--numeric-owner --same-permissions --xattrs"; got != want {
		t.Errorf("undo flags %q, want %q", got, want)
	}
}

// TestAttackUndoLosesXattrsAndACL: DEST/app/a.txt holds the user's own content, a
// user.* attribute and an ACL entry. restore --force (without --xattrs, the default)
// replaces it and writes a before-state; its undo, even with --xattrs, puts the content
// back but not the attribute nor the ACL: the before-state never saved them, so they are
// gone for good. restore.md promises that --force keeps what it replaces so the undo puts
// it back; the correct behaviour is a before-state that holds the attributes and ACLs of
// what it replaces whatever the restore's own --xattrs (or a restore that refuses to
// replace a file whose attributes it cannot save), so that the undo restores them.
func TestAttackUndoLosesXattrsAndACL(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfattr")
	mustTool(t, "setfacl")
	mustTool(t, "getfattr")
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	f := filepath.Join(dest, "app/a.txt")
	if out, err := exec.Command("setfattr", "-n", "user.note", "-v", "keep", f).CombinedOutput(); err != nil {
		t.Skipf("setfattr: %v %s", err, out)
	}
	if out, err := exec.Command("setfacl", "-m", "u:65534:rw", f).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	before, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output()
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", arch, dest), exitComplete)
	states, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(states) != 1 {
		t.Fatalf("before-states %q", states)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--xattrs", states[0], dest), exitComplete)
	assertContent(t, f, "mine\n")
	after, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output()
	if string(after) != string(before) {
		t.Errorf("attributes of app/a.txt after the undo:\n%s\nbefore the restore:\n%s", after, before)
	}
}

// TestAttackPrintedUndoLosesSetuid: DEST/app/a.txt is root's setuid program (04755) with
// other bytes than the archive's. restore --force --same-permissions --xattrs replaces it
// and prints "undo: backup restore --force BEFORE-STATE DEST": the very command run as
// printed puts the bytes back, but not the setuid bit (the file comes back 0755), since the
// printed command leaves out the --same-permissions (and --xattrs) that the restore itself
// used and that the undo needs to put back what was there. Correct behaviour: the printed
// undo command (and --json's undo) carries the flags needed to put back exactly what was
// replaced, at least those the restore ran with.
func TestAttackPrintedUndoLosesSetuid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	f := filepath.Join(dest, "app/a.txt")
	syscall.Chmod(f, 0o4755)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--same-permissions", "--xattrs", arch, dest)
	mustExit(t, r, exitComplete)
	line := strings.Join(printedUndo(t, r.stderr), " ")
	args := strings.Fields(line) // the test's paths hold no spaces
	mustExit(t, backup(t, runOpts{dir: dir}, args...), exitComplete)
	assertContent(t, f, "mine\n")
	var st syscall.Stat_t
	syscall.Stat(f, &st)
	if st.Mode&0o7777 != 0o4755 {
		t.Errorf("after the printed undo (backup %s) app/a.txt has mode %o, was 4755", line, st.Mode&0o7777)
	}
}

// printedUndo is the undo command a restore printed on stderr, as backup's arguments (the
// tests' paths hold no spaces).
func printedUndo(t *testing.T, stderr string) []string {
	t.Helper()
	_, after, ok := strings.Cut(stderr, "(undo: backup ")
	if !ok {
		t.Fatalf("no undo command printed:\n%s", stderr)
	}
	line, _, _ := strings.Cut(after, "\n")
	return strings.Fields(strings.TrimSuffix(line, ")"))
}

// forceRestoreOfA restores arch, backupOf(t, dir, "a"), with --force into dir/dest, its
// before-state in dir, and returns arch, DEST and the undo command the restore printed.
func forceRestoreOfA(t *testing.T, dir string) (arch, dest string, undo []string) {
	t.Helper()
	arch = backupOf(t, dir, "a")
	dest = filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	return arch, dest, printedUndo(t, r.stderr)
}

// straceUndo is the undo under strace, which traces the calls (a trace= list) on paths below
// under only, logs them to log, and applies each of injects (an inject= value) to them.
func straceUndo(dir, under, log, calls string, undo []string, injects ...string) *exec.Cmd {
	args := []string{"-f", "-qq", "-o", log, "-P", under, "-e", "trace=" + calls}
	for _, in := range injects {
		args = append(args, "-e", "inject="+in)
	}
	args = append(append(args, binary), undo...)
	cmd := exec.Command("strace", args...)
	cmd.Dir = dir
	return cmd
}

// TestAttackDocsUndoDirIsASet: docs/create.md has restore --undo-dir pass the one check of
// outputs, which keeps them out of a backup set's folder, and prune --attic refuses a set
// (a folder holding LATEST or .backup.lock), whose runs what it moves would become. A
// before-state written into a set is named as a set's archive is (DEST-before-restore-TIME.zip):
// status listed it among the set's runs, sets counted it, and prune kept it for ever as
// another source's backup.
func TestAttackDocsUndoDirIsASet(t *testing.T) {
	dir := t.TempDir()
	src, set, dest := filepath.Join(dir, "app"), filepath.Join(dir, "set"), filepath.Join(dir, "dest")
	makeTree(t, src, map[string]node{"a.txt": {content: "backed up\n"}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "--output-dir", set, src), exitComplete)
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "mine\n"}})
	before := listDir(t, set)

	r := backup(t, runOpts{}, "restore", "--force", "--undo-dir", set, set, dest)
	if r.code != exitUsage {
		t.Errorf("restore --force --undo-dir SET: exit %d, want %d (usage); stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	if after := listDir(t, set); !slices.Equal(after, before) {
		t.Errorf("the set holds %v after the restore, want %v as before", after, before)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "app", "a.txt")); string(got) != "mine\n" {
		t.Errorf("dest/app/a.txt is %q after a refused restore, want it untouched", got)
	}
}
