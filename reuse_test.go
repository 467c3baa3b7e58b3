package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reuseTree is a source of a few files, one large enough to be compressed in chunks.
func reuseTree(t *testing.T, dir string) {
	t.Helper()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"a.txt":     {content: strings.Repeat("alpha ", 1000)},
		"b.txt":     {content: "b\n"},
		"sub/c.txt": {content: "c\n"},
		"empty":     {},
	})
	big := bytes.Repeat([]byte("0123456789abcdef log line\n"), 100_000) // 2.6 MB: chunked
	if err := os.WriteFile(filepath.Join(dir, "app", "sub", "big.log"), big, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setRun runs create into the set and returns the receipt of the archive it made.
func setRun(t *testing.T, dir, set string, args ...string) (result, string) {
	t.Helper()
	args = append(append([]string{"create", "--output-dir", set}, args...), "app")
	r := backup(t, runOpts{dir: dir}, args...)
	return r, filepath.Join(set, readLatest(t, set))
}

// TestReuseUnchanged: a second run of an unchanged tree copies every file's entry, and its
// archive holds the very bytes of the first, and of a run that reads every file again.
func TestReuseUnchanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	set := filepath.Join(dir, "set")
	r, first := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	r, second := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	if first == second {
		t.Fatal("the second run did not move LATEST")
	}
	rc := readReceipt(t, second+".receipt.json")
	if rc.Counts.Reused != 5 || rc.Counts.ReusedBytes != rc.Counts.Bytes {
		t.Errorf("counts %+v, want all 5 files and their bytes reused", rc.Counts)
	}
	if !strings.Contains(r.stderr, "5 files, 5 reused, 0 B read,") {
		t.Errorf("summary does not say what was reused:\n%s", r.stderr)
	}
	reread := filepath.Join(dir, "reread.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--reread", "-o", reread, "app"), exitComplete)
	for _, other := range []string{first, reread} {
		if !sameBytes(t, second, other) {
			t.Errorf("%s and %s differ: a reusing run must write what a full run writes", second, other)
		}
	}
	unzipTest(t, second)
}

// reusedIn is how many files the receipt of the archive says were copied from the reference.
func reusedIn(t *testing.T, archive string) int {
	t.Helper()
	return readReceipt(t, archive+".receipt.json").Counts.Reused
}

func sameBytes(t *testing.T, a, b string) bool {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(da, db)
}

// TestReuseDetectsChanges: each change re-reads exactly the file it touched. The ctime
// changes with every other change, so --ignore-ctime shows that mtime, inode and mode are
// compared on their own; a file touched back to its old mtime is caught by its ctime.
func TestReuseDetectsChanges(t *testing.T) {
	t.Parallel()
	old := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name   string
		flags  []string
		change func(path string) error
	}{
		{"size", nil, func(p string) error { return os.WriteFile(p, []byte("longer b\n"), 0o644) }},
		{"mtime", []string{"--ignore-ctime"}, func(p string) error { return os.Chtimes(p, old, old) }},
		{"ctime", nil, func(p string) error { // the same mtime again, and the same bytes
			info, err := os.Stat(p)
			if err == nil {
				err = os.Chtimes(p, old, info.ModTime())
			}
			return err
		}},
		{"inode", []string{"--ignore-ctime"}, func(p string) error { return exec.Command("cp", "-p", p, p+".new").Run() }},
		{"mode", []string{"--ignore-ctime"}, func(p string) error { return os.Chmod(p, 0o600) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			reuseTree(t, dir)
			set := filepath.Join(dir, "set")
			r, _ := setRun(t, dir, set, "-q")
			mustExit(t, r, exitComplete)
			b := filepath.Join(dir, "app", "b.txt")
			if err := tt.change(b); err != nil {
				t.Fatal(err)
			}
			if tt.name == "inode" {
				if err := os.Rename(b+".new", b); err != nil {
					t.Fatal(err)
				}
			}
			r, latest := setRun(t, dir, set, append([]string{"-q"}, tt.flags...)...)
			mustExit(t, r, exitComplete)
			if got := reusedIn(t, latest); got != 4 {
				t.Errorf("%d files reused, want 4: all but the changed one", got)
			}
		})
	}
}

// TestReuseIgnoreInode: a copy of the tree has new inodes and change times; with
// --ignore-inode, which leaves out the change time too (as restic's), its files are still
// reused. --ignore-ctime alone still compares the inode.
func TestReuseIgnoreInode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	ref := filepath.Join(dir, "ref.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", ref, "app"), exitComplete)
	copyDir := filepath.Join(dir, "copy")
	if err := os.Mkdir(copyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(dir, "app"), copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	for _, c := range []struct {
		flags []string
		want  int
	}{{nil, 0}, {[]string{"--ignore-ctime"}, 0}, {[]string{"--ignore-inode"}, 5}, {[]string{"--ignore-inode", "--ignore-ctime"}, 5}} {
		out := filepath.Join(dir, "out"+strings.Join(c.flags, "")+".zip")
		args := append(append([]string{"create", "-q", "--reference", ref, "-o", out}, c.flags...), "app")
		mustExit(t, backup(t, runOpts{dir: copyDir}, args...), exitComplete)
		if got := reusedIn(t, out); got != c.want {
			t.Errorf("%v: %d reused, want %d", c.flags, got, c.want)
		}
	}
}

// TestReuseDamagedReference: a flipped byte in the compressed data of an entry of LATEST
// makes the archive another file than its receipt describes: nothing is copied from it, the
// run says so in one line and is complete, and its archive verifies. (An entry changed after
// the reference was proven is read from the file instead: TestReuseEntryChangedAfterOpen.)
func TestReuseDamagedReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	set := filepath.Join(dir, "set")
	r, first := setRun(t, dir, set, "-q")
	mustExit(t, r, exitComplete)
	flipEntryByte(t, first, "app/sub/big.log")
	r, second := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	rc := readReceipt(t, second+".receipt.json")
	if rc.Counts.Reused != 0 || len(rc.Warnings) != 0 {
		t.Errorf("counts %+v, warnings %+v; want nothing reused, and no warning", rc.Counts, rc.Warnings)
	}
	if want := first + ": its SHA-256 is not the one its receipt records\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr:\n%s\nwant a line ending %q", r.stderr, want)
	}
	mustExit(t, backup(t, runOpts{}, "verify", second), exitComplete)
	unzipTest(t, second)
}

// flipEntryByte changes a byte in the middle of the stored data of the entry name.
func flipEntryByte(t *testing.T, path, name string) {
	t.Helper()
	off := dataOffset(t, path, name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestReuseUntrustedLatest: a LATEST that cannot be trusted gives a full run, said in one
// line, and a good backup.
func TestReuseUntrustedLatest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	set := filepath.Join(dir, "set")
	r, _ := setRun(t, dir, set, "-q")
	mustExit(t, r, exitComplete)
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte("nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, latest := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "reading every file") || strings.Count(r.stderr, "nonsense") != 1 {
		t.Errorf("the run did not say once that it read every file:\n%s", r.stderr)
	}
	if got := reusedIn(t, latest); got != 0 {
		t.Errorf("%d reused from an untrusted LATEST", got)
	}
}

// TestReuseReferenceChecks: --reference must be a complete backup whose receipt describes
// it, made with the run's compression; otherwise nothing is reused: a run with other settings
// says nothing, one with an untrusted reference says why in one line. Only a --reference that
// is not there is an error.
func TestReuseReferenceChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	ref := filepath.Join(dir, "ref.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", ref, "app"), exitComplete)
	out := func(name string) string { return filepath.Join(dir, name+".zip") }
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--level", "9", "--reference", ref, "-o", out("l9"), "app")
	mustExit(t, r, exitComplete)
	if got := reusedIn(t, out("l9")); got != 0 {
		t.Errorf("--level 9 reused %d entries of a level 6 reference", got)
	}
	r = backup(t, runOpts{dir: dir}, "create", "-q", "-n", "--json", "--reference", ref, "app")
	if !strings.Contains(r.stdout, `"reused": 5`) {
		t.Errorf("dry run does not say 5 would be reused:\n%s", r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "create", "-q", "--reference", out("typo"), "-o", out("x"), "app")
	if r.code != exitFailed || !strings.Contains(r.stderr, "--reference "+out("typo")+": no such file or directory") {
		t.Errorf("exit %d, stderr %q; want 1 and the missing reference", r.code, r.stderr)
	}
	if _, err := os.Stat(out("x")); err == nil {
		t.Error("an archive was written with a missing --reference")
	}
	if err := os.Remove(ref + ".receipt.json"); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir}, "create", "--reference", ref, "-o", out("y"), "app")
	mustExit(t, r, exitComplete)
	if want := "backup: reading every file: no unchanged entry is copied: " + ref + ": its receipt: "; strings.Count(r.stderr, "\n") != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr:\n%s\nwant the summary and one line starting %q", r.stderr, want)
	}
	if got := reusedIn(t, out("y")); got != 0 {
		t.Errorf("%d reused from a reference without a receipt", got)
	}
}

// TestReuseNeverCopiesDatabases: a WAL database whose main file is unchanged since the
// reference, but whose -wal holds new commits, is snapshotted again, never copied: the new
// archive holds every row. The reference stored the database's bytes (--sqlite off), so
// that its entry matches the unchanged file in every compared field.
func TestReuseNeverCopiesDatabases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a\n"}})
	db := walDB(t, filepath.Join(app, "state.db"), 5, 10)
	defer db.Close()
	ref := filepath.Join(dir, "ref.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--sqlite", "off", "-o", ref, "app"), exitComplete)
	before := lstat(t, filepath.Join(app, "state.db"))
	addRows(t, db, 7, 10)
	if after := lstat(t, filepath.Join(app, "state.db")); !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Fatal("the commits reached the main file; the test needs them in the -wal only")
	}
	out := filepath.Join(dir, "new.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--reference", ref, "-o", out, "app"), exitComplete)
	if got := reusedIn(t, out); got != 1 {
		t.Errorf("%d reused, want 1: a.txt, never the database", got)
	}
	if got := checkDB(t, filepath.Join(restoreTo(t, out), "app", "state.db")).count; got != 12 {
		t.Errorf("the restored database holds %d rows, want 12", got)
	}
}

// TestReusePruneWaits: while a run copies from the set's LATEST (held here by strace at each
// read of that archive), prune cannot take the set's lock (exit 4), so it cannot delete the
// archive being copied from; once the run is done, prune deletes it as usual.
func TestReusePruneWaits(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	reuseTree(t, dir)
	set := filepath.Join(dir, "set")
	r, first := setRun(t, dir, set, "-q")
	mustExit(t, r, exitComplete)
	var stderr bytes.Buffer
	// The run's first fsync is its temp archive's: held there for 5 s, the
	// run has its reference open and its temp in place however slowly this
	// test is scheduled (a delay on the reference's reads left 1 s, which a
	// loaded CI machine once missed).
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=5000000:when=1",
		binary, "create", "-q", "--output-dir", set, "app")
	cmd.Dir, cmd.Stderr = dir, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var runErr error
	exited := false
	waitFor(t, "the run's temp archive", func() bool {
		select {
		case runErr = <-done:
			exited = true
			return true
		default:
		}
		tmp, _ := filepath.Glob(filepath.Join(set, ".app-*.tmp-*"))
		return len(tmp) > 0
	})
	if exited {
		t.Fatalf("the reusing run ended (%v) before its temp archive was seen\n%s", runErr, stderr.String())
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", set), exitLocked)
	if err := <-done; err != nil {
		t.Fatalf("the reusing run: %v\n%s", err, stderr.String())
	}
	second := filepath.Join(set, readLatest(t, set))
	if got := reusedIn(t, second); got != 5 || !exists(first) {
		t.Fatalf("%d reused, reference still there: %v; want 5 and true", got, exists(first))
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", set), exitComplete)
	if exists(first) {
		t.Error("prune kept the old archive once the run was done")
	}
}
