package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// TestOutputDevice: a device node at an output's path is refused (exit 2) and left as it is.
// Once, --receipt /dev/null, run as root, replaced /dev/null with a regular file.
func TestOutputDevice(t *testing.T) {
	mustRoot(t)
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--receipt", "null", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "null", "app"},
		{"create", "--force", "-o", "null", "app"},
		{"status", "--metrics-file", "null", "set"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, " is a character device, not a regular file") {
			t.Errorf("%v: exit %d, %q; want 2 and the device named", args, r.code, r.stderr)
		}
		if info, err := os.Lstat(null); err != nil || info.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%v: null is now %v, %v", args, info.Mode(), err)
		}
	}
}

// pathFlags are the flags that name a path, by command and flag: true for the outputs,
// which must pass pathcheck.Check, false for the inputs. A new path-valued flag fails
// TestOutputFlagsChecked until it is added here, and, as an output, until a script shows
// it refused over an input or another output.
var pathFlags = map[string]bool{
	"create --output":       true,
	"create --output-dir":   true, // a backup set's folder: sealed against the other outputs
	"create --receipt":      true,
	"create --metrics-file": true,
	"status --metrics-file": true,
	"sets --metrics-file":   true,
	"create --cache-dir":    true, // a folder written while the sources are read
	"prune --attic":         true,
	"restore --undo-dir":    true,
	"create --exclude-from": false,
	// The keys' files are only read (and, for create, checked as inputs: no output may
	// replace them).
	"create --recipients-file": false,
	"create --identity":        false,
	"verify --identity":        false,
	"list --identity":          false,
	"restore --identity":       false,
	"activate --identity":      false,
	"adopt --identity":         false,
	"create --reference":       false,
	"verify --receipt":         false,
	"adopt --receipt":          false,
}

// TestOutputFlagsChecked is a statement of policy, as Go's deps_test is: every flag whose
// placeholder names a path is classified in pathFlags, and every output flag has a usage
// error (exits 2) in testdata/script/outputs*.txtar.
func TestOutputFlagsChecked(t *testing.T) {
	scripts, err := filepath.Glob("testdata/script/outputs*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "exits 2 backup "); ok {
				refused = append(refused, rest)
			}
		}
	}
	for _, cmd := range newRootCmd().Commands() {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			placeholder, _ := pflag.UnquoteUsage(f)
			if !slices.Contains([]string{"PATH", "DIR", "FILE", "ARCHIVE"}, placeholder) {
				return
			}
			name := cmd.Name() + " --" + f.Name
			output, ok := pathFlags[name]
			switch {
			case !ok:
				t.Errorf("%s names a path (%s): classify it in pathFlags, and if the command writes there, put it through pathcheck.Check", name, placeholder)
			case output && !slices.ContainsFunc(refused, func(l string) bool {
				return strings.HasPrefix(l, cmd.Name()+" ") && (strings.Contains(l, " --"+f.Name+" ") || f.Shorthand != "" && strings.Contains(l, " -"+f.Shorthand+" "))
			}):
				t.Errorf("output flag %s has no usage error in testdata/script/outputs*.txtar", name)
			}
		})
	}
}

// TestPathFlagsRefuseEmpty: every path-valued flag refuses the empty string, as
// docs/create.md (Outputs never overwrite inputs) promises, with exit 2 and one line naming it. restore --undo-dir "" was taken for "not
// given", and the before-state went to DEST's parent, the folder the script meant not to use.
func TestPathFlagsRefuseEmpty(t *testing.T) { // not parallel: t.Chdir
	rest := map[string][]string{ // what each command needs besides the flag
		"create":   {"src"},
		"status":   {"set"},
		"prune":    {"--keep-last", "1", "set"},
		"restore":  {"--force", "a.zip", "dest"},
		"verify":   {"a.zip"},
		"list":     {"a.zip"},
		"adopt":    {"set", "a.zip"},
		"activate": {"set", "a.zip"},
	}
	for name := range pathFlags {
		cmd, flag, _ := strings.Cut(name, " ")
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{cmd, flag, ""}, rest[cmd]...)
			var stdout, stderr strings.Builder
			t.Chdir(dir)
			code := run(args, &stdout, &stderr)
			if want := flag + " is empty"; code != exitUsage || !strings.Contains(stderr.String(), want) {
				t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, stderr.String(), want)
			}
			if got := listDir(t, dir); len(got) > 0 {
				t.Errorf("%q wrote %q", args, got)
			}
		})
	}
}

// TestOutputSymlinkToDevice: an output's path that is a symlink to a device, a FIFO or a
// socket, or one through /proc (/dev/stdout, /dev/stderr, /proc/self/fd/N), names that
// file, not a place for a new one: the rename that puts the output in place replaced the
// link. Run as root, --metrics-file /dev/stdout replaced the system's /dev/stdout with a
// regular file, and so it did with a link to /dev/null here. Such a path is refused (exit
// 2) and left as it is; a symlink to a regular file, or a dangling one, is still replaced.
func TestOutputSymlinkToDevice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	links := map[string]string{"nul": "/dev/null", "out": "/proc/self/fd/1", "err": "/dev/stderr"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	stdout, err := os.Create(filepath.Join(dir, "stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--receipt", "nul", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "out", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "err", "app"},
		{"create", "--force", "-o", "nul", "app"},
		{"status", "--metrics-file", "out", "set"},
	} {
		if code, stderr := runStdoutTo(dir, stdout, args...); code != exitUsage || !strings.Contains(stderr, " is a symlink to ") {
			t.Errorf("%v: exit %d, %q; want 2 and the link named", args, code, stderr)
		}
		for name, target := range links {
			if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != target {
				t.Fatalf("%v: %s is no longer the link to %s: %q, %v", args, name, target, got, err)
			}
		}
	}
}

// runStdoutTo runs the binary in dir with stdout the file given (a regular file, which
// /proc/self/fd/1 resolves to), and returns its exit code and stderr.
func runStdoutTo(dir string, stdout *os.File, args ...string) (int, string) {
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdout = stdout
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestAttackOutputDirDotDotInsideSource: --output-dir SRC/sub/lnk/.., lnk a symlink to a
// folder outside SRC. The check of outputs against SOURCEs took the path as the kernel does
// (outside SRC), but the set was written where filepath.Abs put it, SRC/sub, inside the
// SOURCE: the next run archived the set's own LATEST, archive and receipt.
func TestAttackOutputDirDotDotInsideSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"a.txt": {content: "hi\n"}, "sub/keep": {content: "k\n"}})
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "q"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "q"), filepath.Join(dir, "src/sub/lnk")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "src/sub/lnk/..", "src"), exitComplete)
	}
	if _, err := os.Stat(filepath.Join(out, "LATEST")); err != nil {
		t.Errorf("the set is not where the kernel reaches src/sub/lnk/.. (%s): %v", out, err)
	}
	latest := readLatest(t, out)
	for name := range readZip(t, filepath.Join(out, latest)) {
		if strings.HasPrefix(name, "src/sub/") && name != "src/sub/" && name != "src/sub/keep" {
			t.Errorf("the second run archived %s, a file of its own set", name)
		}
	}
}

// TestAttackDotDotOutputFollowsSymlink: an output path holding ".." is now resolved by
// absPath with every symlink followed, the last name's included. docs/create.md: "a symlink
// to a regular file is replaced, as ever" (pathcheck: "A symlink there is replaced, not
// followed"), and so it is for -o backups/app.zip or --receipt backups/r.json; but the same
// outputs named from a sibling folder, ../backups/app.zip, ../backups/r.json (a ".." in
// front, as any script run from its own folder names them), are written through the link:
// the file it points to, outside the folder named, is replaced (the receipt needs no
// --force at all), and the link stays as it was.
func TestAttackDotDotOutputFollowsSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"src/app/a":       {content: "hi\n"},
		"keep/r.json":     {content: "the user's own file\n"},
		"keep/user.zip":   {content: "the user's own zip\n"},
		"backups/r.json":  {kind: "symlink", content: "../keep/r.json"},
		"backups/app.zip": {kind: "symlink", content: "../keep/user.zip"},
		"work":            {kind: "dir"},
	})
	work := filepath.Join(dir, "work")
	runs := []struct {
		args   []string
		link   string // the output's name, a symlink
		target string // the user's file it points to
	}{
		{[]string{"create", "-q", "-o", "../backups/b.zip", "--receipt", "../backups/r.json", "../src/app"}, "backups/r.json", "keep/r.json"},
		{[]string{"create", "-q", "--force", "-o", "../backups/app.zip", "../src/app"}, "backups/app.zip", "keep/user.zip"},
	}
	for _, run := range runs {
		want := string(readFile(t, filepath.Join(dir, run.target)))
		r := backup(t, runOpts{dir: work}, run.args...)
		mustExit(t, r, exitComplete)
		if got := string(readFile(t, filepath.Join(dir, run.target))); got != want {
			t.Errorf("backup %s replaced %s, the file the symlink %s points to (now %d bytes), instead of the symlink", strings.Join(run.args, " "), run.target, run.link, len(got))
		}
		if info, err := os.Lstat(filepath.Join(dir, run.link)); err != nil || info.Mode()&os.ModeSymlink != 0 {
			t.Errorf("backup %s left %s a symlink (%v): the output was not written at the name given", strings.Join(run.args, " "), run.link, err)
		}
	}
}

// TestAttackDotDotSourceSymlinkRenamed: a SOURCE that is a symlink to a folder is
// stored under its own base name (README: "under the base name of each SOURCE"), mylink/a;
// named with a ".." anywhere before it (sub/../mylink, the same folder to the kernel), it is
// now stored under its target's name, data/a, since absPath follows every link of a path
// holding "..". The same SOURCE then gives other archives, and in a backup set the second
// run fails (exit 1: "the backup set of "mylink" … back up "data" into a folder of its own").
func TestAttackDotDotSourceSymlinkRenamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"real/data/a": {content: "hi\n"},
		"mylink":      {kind: "symlink", content: "real/data"},
		"sub":         {kind: "dir"},
	})
	for _, src := range []string{"mylink", "sub/../mylink"} {
		arch := filepath.Join(dir, strings.ReplaceAll(src, "/", "_")+".zip")
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, src), exitComplete)
		if _, ok := readZip(t, arch)["mylink/a"]; !ok {
			t.Errorf("SOURCE %s is not stored under its base name mylink: %v", src, slices.Sorted(maps.Keys(readZip(t, arch))))
		}
	}
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "mylink"), exitComplete)
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "sub/../mylink"); r.code != exitComplete {
		t.Errorf("the set's SOURCE named as sub/../mylink: exit %d, %q", r.code, r.stderr)
	}
}

// TestAttackDotDotSetReadLexically: a set given as a path holding ".." after a symlink
// (w/x/lnk/.., lnk -> ../real/sub) is the folder the kernel reaches (w/real) for status,
// sets, prune and create --output-dir (absPath, kernelPath); but verify, list and restore
// take the same argument to resolveArchive (set_resolve.go:44-52), which os.Stat's it as the
// kernel does and then reads LATEST and the archive through backupset.Folder{Dir: arg} and
// filepath.Join(arg, name), which clean lnk/.. away: they read the set in w/x. The same
// argument names two sets: status says app's set, restore restores another's files.
func TestAttackDotDotSetReadLexically(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"app/f":      {content: "app's\n"},
		"other/g":    {content: "other's\n"},
		"w/real/sub": {kind: "dir"},
		"w/x/lnk":    {kind: "symlink", content: "../real/sub"},
	})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "w/real", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "w/x", "other"), exitComplete)
	set := "w/x/lnk/.."
	r := backup(t, runOpts{dir: dir}, "status", set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "app-") {
		t.Fatalf("status %s does not name app's set (w/real): %q", set, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "list", set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "app/f") {
		t.Errorf("list %s lists another set than status %s names: %q", set, set, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "verify", set)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stdout, "other-") {
		t.Errorf("verify %s verified another set's archive than status names: %q", set, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "restore", set, "dst")
	mustExit(t, r, exitComplete)
	if _, err := os.Stat(filepath.Join(dir, "dst", "app", "f")); err != nil {
		t.Errorf("restore %s dst did not restore the set status names (w/real, app): %v; dst holds %v", set, err, listDir(t, filepath.Join(dir, "dst")))
	}
}

// TestAttackDotDotMetricsFileStagedLexically: --metrics-file is the one output of create
// (and of status and sets) not made absolute by absPath: given as x/lnk/../m.prom (lnk a
// symlink to a folder on another filesystem), the check of outputs looks where the kernel
// puts it (pathcheck resolves lnk first), but atomicfile.Stage (atomicfile/file.go:32)
// writes its temp file in filepath.Dir of the path as given, x (lnk/.. cleaned away), and
// the rename across filesystems fails: "could not write metrics …: invalid cross-device
// link", where -o x/lnk/../a.zip in the same run is written, and --metrics-file named
// without .. is written too. On one filesystem the temp file is made in a folder the check
// never looked at.
func TestAttackDotDotMetricsFileStagedLexically(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other, err := os.MkdirTemp("/dev/shm", "attack4-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(other)
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is not another filesystem than the test's temp folder")
	}
	makeTree(t, dir, map[string]node{"app/f": {content: "1"}, "x/lnk": {kind: "symlink", content: filepath.Join(other, "sub")}})
	makeTree(t, other, map[string]node{"sub": {kind: "dir"}})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "x/lnk/../a.zip", "--metrics-file", "x/lnk/../m.prom", "app")
	mustExit(t, r, exitComplete)
	if _, err := os.Stat(filepath.Join(other, "a.zip")); err != nil {
		t.Fatalf("-o x/lnk/../a.zip was not written where the kernel puts it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "m.prom")); err != nil {
		t.Errorf("--metrics-file x/lnk/../m.prom was not written (%v): %q", err, r.stderr)
	}
}

// TestAttackDotDotAfterFileRestoresIntoParent: restore's DEST file/.., where file is a
// regular file, is no folder for the kernel (ls: Not a directory), as file/x is not (that
// DEST fails). kernelPath takes it through filepath.EvalSymlinks, which pops the .. after
// a file lexically: the archive is restored into the folder that holds file, which the user
// never named.
func TestAttackDotDotAfterFileRestoresIntoParent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "w/file": {content: "mine"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), 0)
	w := filepath.Join(dir, "w")
	if _, err := os.Stat(w + "/file/.."); err == nil {
		t.Fatal("the kernel finds file/..")
	}
	r := backup(t, runOpts{dir: w}, "restore", "../a.zip", "file/..")
	if _, err := os.Lstat(filepath.Join(w, "src")); err == nil {
		t.Fatalf("restore into file/.. (not a folder: ENOTDIR) wrote into file's folder (exit %d):\n%s", r.code, r.stderr)
	}
	if r.code == 0 {
		t.Fatalf("restore into file/.. exited 0:\n%s", r.stderr)
	}
}

// TestAttackDotDotAfterSymlinkLoopRestoresIntoParent: restore's DEST loop/.., where loop
// is a symlink to itself, is no folder for the kernel (ELOOP). resolvePath follows loop 40
// times, then joins the rest with filepath.Join, which cleans loop/.. away: the archive is
// restored into the folder that holds loop.
func TestAttackDotDotAfterSymlinkLoopRestoresIntoParent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "w/loop": {kind: "symlink", content: "loop"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), 0)
	w := filepath.Join(dir, "w")
	if _, err := os.Stat(w + "/loop/.."); err == nil {
		t.Fatal("the kernel finds loop/..")
	}
	r := backup(t, runOpts{dir: w}, "restore", "../a.zip", "loop/..")
	if _, err := os.Lstat(filepath.Join(w, "src")); err == nil {
		t.Fatalf("restore into loop/.. (ELOOP for the kernel) wrote into loop's folder (exit %d):\n%s", r.code, r.stderr)
	}
	if r.code == 0 {
		t.Fatalf("restore into loop/.. exited 0:\n%s", r.stderr)
	}
}

// TestAttackStdoutReceiptFolderCheckedLexically: with -o -, a --receipt whose folder is
// not there is refused with exit 2 before the archive streams (docs/create.md). --receipt
// dl/../r.json, dl a symlink to missing/sub, has no folder for the kernel (dl/.. does not
// resolve), and the receipt is written where kernelPath puts it, missing/r.json; but the
// check stats filepath.Dir of the path as given, ".", which is there: the whole archive
// streams, and only then the receipt fails, exit 1.
func TestAttackStdoutReceiptFolderCheckedLexically(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "dl": {kind: "symlink", content: "missing/sub"}})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "-", "--receipt", "dl/../r.json", "src")
	if r.code != 2 || r.stdout != "" {
		t.Fatalf("--receipt dl/../r.json, whose folder is not there: exit %d, %d bytes streamed to stdout; want exit 2 before the archive streams:\n%s", r.code, len(r.stdout), r.stderr)
	}
}

// restore ARCHIVE missing/..: the kernel refuses the path (missing is not there), and
// 3b2a98e says such a ".." fails the command with nothing written. restore drops
// kernelPath's error (restore.go: the DEST is kept as given when kernelPath fails), plans
// against missing/.. (nothing there), then creates missing and restores into its parent:
// missing is left behind, and a file the parent held all along is reported as having
// "appeared in the destination during the restore", exit 3, where the same restore into
// that folder by its own name is refused as a conflict, nothing written (exit 1).
func TestAttackRestoreMissingDotDotWrites(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "data\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), 0)
	if err := os.WriteFile(filepath.Join(dir, "app", "f"), []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "a.zip", "nope/..")
	if _, err := os.Lstat(filepath.Join(dir, "nope")); err == nil {
		t.Errorf("restore into nope/.. created nope (nothing may be written when the kernel refuses the path); stderr:\n%s", r.stderr)
	}
	if r.code != 1 && r.code != 2 {
		t.Errorf("exit %d, want 1 or 2 (the kernel refuses nope/..); stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "appeared in the destination during the restore") {
		t.Errorf("a file there all along is reported as appeared during the restore:\n%s", r.stderr)
	}
	if got := string(readFile(t, filepath.Join(dir, "app", "f"))); got != "precious\n" {
		t.Errorf("app/f = %q", got)
	}
}

// TestAttackOutputInProc: an output given as a path in /proc itself (--metrics-file
// /proc/self/fd/1, not a link to it) passed the check, which looked for /proc on the links
// leading to the path, when stdout was a regular file: the run said complete, exit 0, and
// only then warned that the metrics could not be written (no temp file can be made there).
// /proc holds no place for a file: refused (exit 2) before anything runs, as the links are.
func TestAttackOutputInProc(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	stdout, err := os.Create(filepath.Join(dir, "stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--metrics-file", "/proc/self/fd/1", "app"},
		{"create", "-o", "b.zip", "--receipt", "/proc/self/fd/1", "app"},
		{"status", "--metrics-file", "/proc/self/fd/1", "set"},
	} {
		if code, stderr := runStdoutTo(dir, stdout, args...); code != exitUsage || !strings.Contains(stderr, "/proc") {
			t.Errorf("%v: exit %d, %q; want 2 and /proc named", args, code, stderr)
		}
	}
	for _, name := range []string{"a.zip", "b.zip"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}
