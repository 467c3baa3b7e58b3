package main

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostileEntry is one entry of an archive built to escape its destination.
type hostileEntry struct {
	name, body string
	symlink    bool
	dos        bool // made on DOS ("made by" host 0), where a backslash separates folders
}

func writeHostileZip(t *testing.T, path string, entries []hostileEntry) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if !e.dos {
			fh.SetMode(0o644) // and with it host Unix
		}
		if e.symlink {
			fh.SetMode(fs.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreHostile restores archives built to write outside DEST: each is refused with
// the entry named, and nothing is written anywhere, DEST included.
func TestRestoreHostile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []hostileEntry
		want    string
	}{
		{"dot-dot", []hostileEntry{{name: "ok.txt", body: "fine"}, {name: "../evil", body: "x"}},
			`../evil: unsafe name: ".." component`},
		{"dot-dot below a folder", []hostileEntry{{name: "a/../../evil", body: "x"}}, `a/../../evil: unsafe name: ".." component`},
		{"absolute", []hostileEntry{{name: "/tmp/evil", body: "x"}}, "/tmp/evil: unsafe name: absolute"},
		{"backslash from DOS", []hostileEntry{{name: `..\evil`, body: "x", dos: true}}, `..\evil: unsafe name: contains a backslash (a Windows separator)`},
		{"symlink then a file through it", []hostileEntry{{name: "link", body: "..", symlink: true}, {name: "link/evil", body: "x"}},
			"link/evil: unsafe name: below link, a symlink entry"},
		{"duplicate names", []hostileEntry{{name: "a", body: "1"}, {name: "a", body: "2"}}, "a: duplicate name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "in", "hostile.zip")
			os.Mkdir(filepath.Dir(arch), 0o755)
			writeHostileZip(t, arch, tt.entries)
			work := filepath.Join(dir, "work")
			os.Mkdir(work, 0o755)
			dest := filepath.Join(work, "dest")
			r := backup(t, runOpts{dir: work}, "restore", "--force", arch, dest)
			if r.code != exitFailed || !strings.Contains(r.stderr, tt.want+"\n") || !strings.Contains(r.stderr, "refused, nothing written") {
				t.Errorf("exit %d stderr %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want)
			}
			if got := listTree(t, dir); !slices.Equal(got, []string{"in/", "in/hostile.zip", "work/"}) {
				t.Errorf("files after the restore: %q, want only the archive", got)
			}
			if r := backup(t, runOpts{dir: work}, "verify", arch); r.code != exitFailed || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("verify: exit %d stderr %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want)
			}
		})
	}
}

// TestRestoreThroughSymlinkInDest restores into a DEST where a folder of the archive is a
// symlink to elsewhere: refused, and nothing lands where the link points.
func TestRestoreThroughSymlinkInDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest, outside := filepath.Join(dir, "dest"), filepath.Join(dir, "outside")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.Mkdir(outside, 0o755)
	os.Symlink(outside, filepath.Join(dest, "app/sub"))
	r := backup(t, runOpts{dir: dir}, "restore", "--force", arch, dest)
	want := "app/sub/b.txt: would pass through app/sub, a symlink in the destination\n"
	if r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d stderr %q, want %d and %q", r.code, r.stderr, exitFailed, want)
	}
	if got := listTree(t, outside); len(got) > 0 {
		t.Errorf("written through the symlink: %q", got)
	}
}

// TestRestoreForeignSpecial restores a foreign archive holding a symlink entry: it is
// listed, not created, and the rest is restored (exit 0).
func TestRestoreForeignSpecial(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "f.zip")
	writeHostileZip(t, arch, []hostileEntry{{name: "x/a", body: "a"}, {name: "x/link", body: "/etc/passwd", symlink: true}})
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	if r.code != exitComplete || !strings.Contains(r.stderr, "x/link: not created (a symlink entry)\n") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if got := listTree(t, dest); !slices.Equal(got, []string{"x/", "x/a"}) {
		t.Errorf("restored %q, want x/a only", got)
	}
}

// TestRestorePartly restores as uid 65534 into a DEST where one folder is root's: the file
// in it is listed as not restored and the rest is restored; exit 3.
func TestRestorePartly(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	arch := backupOf(t, dir, "a")
	os.Chmod(arch, 0o644)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app/sub"), 0o755)
	os.Chmod(filepath.Join(dest, "app"), 0o777)
	os.Chmod(dest, 0o777)
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", arch, dest)
	want := "app/sub/b.txt: create temp file: permission denied (not restored)\n"
	if r.code != exitIncomplete || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "backup restore: incomplete: 1 file, 3 dirs") {
		t.Errorf("exit %d stderr %q, want %d and %q", r.code, r.stderr, exitIncomplete, want)
	}
	assertContent(t, filepath.Join(dest, "app/a.txt"), "alpha\n")
	if got := listTree(t, filepath.Join(dest, "app/sub")); len(got) > 0 {
		t.Errorf("app/sub holds %q, want nothing", got)
	}
}
