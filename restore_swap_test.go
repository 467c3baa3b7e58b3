package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestRestoreDirMovedOut holds a restore right after it put the first file of app/d1 in
// place (strace delays that link), moves app/d1 out of DEST and leaves a symlink to it, or
// a new folder, in its place: the rest of app/d1's files must not follow the folder out.
// They fail (exit 3), each named, and the moved folder keeps only what it held when it left.
func TestRestoreDirMovedOut(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	tests := []struct {
		name    string
		replace func(path, moved string) error
		want    string
	}{
		{"by a symlink", func(path, moved string) error { return os.Symlink(moved, path) }, "app/d1 is a symlink or not a directory"},
		{"by a new folder", func(path, _ string) error { return os.Mkdir(path, 0o755) }, "app/d1 was moved or replaced during the restore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch := d1Archive(t, dir)
			dest, moved := filepath.Join(dir, "dest"), filepath.Join(dir, "outside/moved")
			os.MkdirAll(filepath.Dir(moved), 0o755)
			code, stderr := restoreSwapping(t, dir, arch, dest, func() {
				if err := os.Rename(filepath.Join(dest, "app/d1"), moved); err != nil {
					t.Fatal(err)
				}
				if err := tt.replace(filepath.Join(dest, "app/d1"), moved); err != nil {
					t.Fatal(err)
				}
			})
			if code != exitIncomplete {
				t.Errorf("exit %d, want %d\n%s", code, exitIncomplete, stderr)
			}
			for _, want := range []string{"app/d1/f2: " + tt.want, "app/d1/f3: " + tt.want, "backup restore: incomplete: "} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if got := listTree(t, moved); !slices.Equal(got, []string{"f1"}) {
				t.Errorf("the moved folder holds %q, want f1 only", got)
			}
			assertContent(t, filepath.Join(dest, "app/z.txt"), "z\n")
		})
	}
}

// d1Archive writes dir/a.zip, a backup of src/app holding app/d1/f1, f2 and f3, then
// app/z.txt: the tree of the tests that change app/d1 during a restore.
func d1Archive(t *testing.T, dir string) string {
	t.Helper()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"d1/f1": {content: "1\n"}, "d1/f2": {content: "2\n"}, "d1/f3": {content: "3\n"}, "z.txt": {content: "z\n"},
	})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	return arch
}

// restoreSwapping runs restore ARCHIVE DEST under strace, which holds the process after its
// first link (the first new file put in place) while swap runs; it returns the exit code and
// stderr. One job: the test names which files come after the swap, which with more workers
// would be a race between them (a worker not held goes on writing until the swap).
func restoreSwapping(t *testing.T, dir, arch, dest string, swap func()) (int, string) {
	t.Helper()
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=linkat", "-e", "inject=linkat:delay_exit=1500000:when=1",
		binary, "restore", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "linkat(") && returned(c) })
	swap()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestRestorePlanReadsNothingThroughALink holds the restore's plan while it looks at
// app/f in DEST (strace delays the first stat by the path of app or of app/f, or relative to
// app's descriptor) and swaps app for a symlink to a folder outside
// holding the archived app/f: the plan must judge what DEST held, not read the outside file
// and call it already present. DEST's own app/f differs, so the restore is refused as a
// conflict and nothing changes.
func TestRestorePlanReadsNothingThroughALink(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "archived\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest, outside := filepath.Join(dir, "dest"), filepath.Join(dir, "outside")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"f": {content: "in DEST\n"}})
	makeTree(t, outside, map[string]node{"f": {content: "archived\n"}})

	log := filepath.Join(dir, "strace.log")
	traced := filepath.Join(dest, "app/f")
	cmd := exec.Command("strace", "-f", "-y", "-o", log, "-e", "trace=newfstatat", "-e", "inject=newfstatat:delay_exit=1500000:when=1",
		"-P", traced, "-P", filepath.Dir(traced), binary, "restore", "--jobs", "1", "--json", arch, dest)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "newfstatat(") && returned(c) })
	if err := os.Rename(filepath.Join(dest, "app"), filepath.Join(dir, "app.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dest, "app")); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	out := restoreJSONOf(t, result{stdout: stdout.String(), stderr: stderr.String()})
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || out.AlreadyPresent != 0 || !slices.Equal(out.Conflicts, []string{"app/f"}) {
		t.Errorf("exit %d, already present %d, conflicts %q; want %d, 0 and app/f\n%s", code, out.AlreadyPresent, out.Conflicts, exitFailed, stderr.String())
	}
	assertContent(t, filepath.Join(outside, "f"), "archived\n")
}

// TestAttackSymlinkTempSwappedGetsOwner: root restores an archive holding the stored
// symlink app/sub/l into a DEST where app/sub belongs to nobody. The restore makes the link
// under a temp name (symlinkat), then gives that name its owner (fchownat), mtime
// (utimensat) and attributes, all by name, then renames it into place: nothing checks that
// the name still holds the link it made. strace holds the restore after symlinkat, and
// nobody replaces the temp link by a regular file of its own, mode 0666: the restore makes
// nobody's file root's, gives it the archive's mtime, renames it to app/sub/l and reports
// "1 symlink", complete, exit 0. app/sub/l is a root-owned, world-writable regular file with
// nobody's bytes where a symlink was recorded. Correct behaviour: the temp name is checked
// to hold the symlink this run made (its identity from an fstatat right after symlinkat)
// before its owner, attributes and mtime are set and before it is renamed; otherwise the
// entry fails (exit 3) and nobody's file is left as it is.
func TestAttackSymlinkTempSwappedGetsOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"sub/l": {kind: "symlink", content: "../target"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	sub := filepath.Join(dest, "app/sub")
	os.MkdirAll(sub, 0o755)
	os.Chown(sub, nobody, nobody)
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=symlinkat", "-e", "inject=symlinkat:delay_exit=1500000:when=1",
		binary, "restore", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tmp string
	waitForCall(t, log, func(c string) bool {
		if i := strings.Index(c, `".l.restore-`); i >= 0 && returned(c) {
			tmp = strings.SplitN(c[i+1:], `"`, 2)[0]
			return true
		}
		return false
	})
	swap := exec.Command("sh", "-c", `cd "$1" && rm -f "$2" && printf 'mine\n' > "$2" && chmod 666 "$2"`, "swap", sub, tmp)
	swap.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := swap.CombinedOutput(); err != nil {
		t.Fatalf("swap as nobody: %v %s", err, out)
	}
	cmd.Wait()
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(sub, "l"), &st); err != nil {
		return // the entry failed, and nobody's file was left alone
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Uid == 0 {
		t.Errorf("app/sub/l is a regular file (mode %o) that nobody wrote, now owned by root; restore exit %d:\n%s",
			st.Mode&0o7777, cmd.ProcessState.ExitCode(), stderr.String())
	}
}
