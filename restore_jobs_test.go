package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRestoreJobsSameResult: a restore with many workers does what one worker does, and says
// it in the same words: the same tree (contents, a hard-link group linked again, a symlink),
// the same exit code, the same --json result and stderr lines, damaged entries listed in
// archive order.
func TestRestoreJobsSameResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nodes := map[string]node{"link": {kind: "symlink", content: "d03/f005"}}
	for d := range 10 {
		for f := range 12 {
			nodes[fmt.Sprintf("d%02d/f%03d", d, f)] = node{content: strings.Repeat(fmt.Sprintf("%d.%d ", d, f), 50+d*f)}
		}
	}
	src := filepath.Join(dir, "src/app")
	makeTree(t, src, nodes)
	for _, name := range []string{"d05/hard", "d09/hard"} {
		if err := os.Link(filepath.Join(src, "d01/f001"), filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "src/app"), exitComplete)
	for d := range 10 {
		for _, f := range []int{(d + 2) % 12, 11 - d} {
			flipInPlace(t, arch, fmt.Sprintf("app/d%02d/f%03d", d, f))
		}
	}
	var first result
	var firstTree []string
	for _, jobs := range []string{"1", "4", "16"} {
		dest := filepath.Join(dir, "dest"+jobs)
		r := backup(t, runOpts{dir: dir}, "restore", "--jobs", jobs, "--json", arch, dest)
		r.stdout, r.stderr = strings.ReplaceAll(r.stdout, dest, "DEST"), strings.ReplaceAll(r.stderr, dest, "DEST")
		tree := treeContents(t, filepath.Join(dest, "app"))
		if a, b := sameFile(t, filepath.Join(dest, "app/d05/hard"), filepath.Join(dest, "app/d09/hard")); !a || !b {
			t.Errorf("--jobs %s: the hard-link group is not one file again (d05/hard and d09/hard: %v; d01/f001 too: %v)", jobs, a, b)
		}
		if jobs == "1" {
			first, firstTree = r, tree
			if r.code != exitFailed || !strings.Contains(r.stdout, "app/d02/f004") {
				t.Fatalf("--jobs 1: exit %d, want %d with the damaged entries listed\n%s\n%s", r.code, exitFailed, r.stdout, r.stderr)
			}
			continue
		}
		if r.code != first.code || r.stdout != first.stdout || r.stderr != first.stderr {
			t.Errorf("--jobs %s: exit %d\n%s\n%s\nwant, as --jobs 1: exit %d\n%s\n%s", jobs, r.code, r.stdout, r.stderr, first.code, first.stdout, first.stderr)
		}
		if !slices.Equal(tree, firstTree) {
			t.Errorf("--jobs %s restored\n%q\nwant, as --jobs 1:\n%q", jobs, tree, firstTree)
		}
	}
}

// treeContents lists each path below root with its type and, for a file, its content's
// length and first bytes; for a symlink, its target.
func treeContents(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, rel := range listTree(t, root) {
		p := filepath.Join(root, strings.TrimRight(rel, "@/"))
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		case info.Mode().IsRegular():
			data := readFile(t, p)
			out = append(out, fmt.Sprintf("%s %v %d %q", rel, info.Mode(), len(data), data[:min(len(data), 12)]))
		default:
			out = append(out, fmt.Sprintf("%s %v", rel, info.Mode()))
		}
	}
	return out
}

// sameFile reports whether a and b are one file, and whether the group's first member
// (d01/f001, beside them) is that file too.
func sameFile(t *testing.T, a, b string) (bool, bool) {
	t.Helper()
	ia, err1 := os.Lstat(a)
	ib, err2 := os.Lstat(b)
	ic, err3 := os.Lstat(filepath.Join(filepath.Dir(filepath.Dir(a)), "d01/f001"))
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("stat: %v %v %v", err1, err2, err3)
	}
	return os.SameFile(ia, ib), os.SameFile(ia, ic)
}

// TestRestoreJobsDeepTreeFewFiles: each worker keeps open the folders of the path it wrote
// last, so 32 workers in 32 trees 40 folders deep would hold 1,300 descriptors: under a
// limit of 256 open files many of their entries failed ("too many open files", exit 3)
// where --jobs 1 restores everything. The workers are as many as the limit allows for the
// deepest path, never fewer than one: the same files and exit code as --jobs 1.
func TestRestoreJobsDeepTreeFewFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for b := range 32 {
		fh := &zip.FileHeader{Name: fmt.Sprintf("b%02d/%sf", b, strings.Repeat("x/", 40)), Method: zip.Store}
		fh.SetMode(0o644)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "deep.zip")
	if err := os.WriteFile(arch, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []string{"1", "32"} {
		dest := filepath.Join(dir, "dest"+jobs)
		cmd := exec.Command("sh", "-c", `ulimit -n 256 && exec "$@"`, "sh", binary, "restore", "-q", "--jobs", jobs, arch, dest)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("--jobs %s under ulimit -n 256: %v\n%.600s", jobs, err, out)
		}
		files := 0
		for _, rel := range listTree(t, dest) {
			if strings.HasSuffix(rel, "/f") {
				files++
			}
		}
		if files != 32 {
			t.Errorf("--jobs %s: %d files restored, want 32", jobs, files)
		}
	}
}

// TestRestoreJobsDiskFull: a DEST that fills up part way stops a restore with many workers
// as it stops one: exit 1 naming the cause, and exactly the files --json counts in place,
// whole, with no temp file or journal left.
func TestRestoreJobsDiskFull(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	files := map[string]node{}
	for i := range 60 {
		files[fmt.Sprintf("f%02d", i)] = node{content: randomString(t, 60000)} // does not compress
	}
	makeTree(t, filepath.Join(dir, "app"), files)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	mountTmpfs(t, full, "1m")
	dest := filepath.Join(full, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--jobs", "4", "--json", arch, dest)
	out := restoreJSONOf(t, r)
	if r.code != exitFailed || out.Status != restoreFailed || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("exit %d, status %s, stderr %q; want 1, failed, the cause", r.code, out.Status, r.stderr)
	}
	var in []string
	for _, name := range listTree(t, dest) {
		if name == "app/" {
			continue
		}
		in = append(in, name)
		if want, ok := files[strings.TrimPrefix(name, "app/")]; !ok {
			t.Errorf("%s left in DEST", name)
		} else {
			assertContent(t, filepath.Join(dest, name), want.content)
		}
	}
	if len(in) != out.Files || out.Files == 0 || out.Files == len(files) {
		t.Errorf("%d files in place, --json counts %d; want the same, some but not all", len(in), out.Files)
	}
}

// TestAttackDeepEntryStarvesNeighbours: an archive of three files, "first", one 300
// folders deep (a/a/…/f: a 601-byte name, far below PATH_MAX) and "ok", restored with
// --jobs 1 under ulimit -n 256. The deep file fails ("too many open files": the worker keeps
// every folder of the path open), and so does "ok", a file at the top of DEST, since the
// descriptors of the deep path are still held when it is written: exit 3 with "ok: create
// temp file: too many open files". restore.md: "an archive of deep trees is restored by
// fewer workers, not with 'too many open files'", and never fewer than one. Correct
// behaviour: a path deeper than the descriptors allow is walked holding only what the
// limit allows (openat needs the parent only), so all three are restored (exit 0); at the
// very least the failure of one entry never fails the entries after it.
func TestAttackDeepEntryStarvesNeighbours(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"first", strings.Repeat("a/", 300) + "f", "ok"} {
		fh := &zip.FileHeader{Name: name, Method: zip.Store}
		fh.SetMode(0o644)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data"))
	}
	zw.Close()
	arch := filepath.Join(dir, "deep.zip")
	os.WriteFile(arch, buf.Bytes(), 0o644)
	dest := filepath.Join(dir, "dest")
	cmd := exec.Command("sh", "-c", `ulimit -n 256 && exec "$@"`, "sh", binary, "restore", "--jobs", "1", arch, dest)
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(dest, "ok")); serr != nil {
		t.Errorf("ok, a file at the top of DEST, not restored after the deep entry (%v):\n%.800s", err, out)
	}
	if _, serr := os.Stat(filepath.Join(dest, strings.Repeat("a/", 300)+"f")); serr != nil {
		t.Errorf("the file 300 folders deep not restored under ulimit -n 256 (%v)", err)
	}
}
