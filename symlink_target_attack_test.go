package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackVerifyOKOnTargetRestoreRefuses: a backup of a symlink whose entry and manifest
// record both say its target is "" (or "a\x00b"), which no Linux symlink holds. verify said
// ok (exit 0); restore called the entry damaged, "symlink target is empty or holds a NUL",
// and exited 1: two verdicts on one archive (hostile-archive pass). Likewise a target of
// 4096 bytes, past the 4095 a Linux symlink holds (PATH_MAX with its NUL): verify said ok,
// restore failed the entry with "symlink: file name too long", exit 3.
func TestAttackVerifyOKOnTargetRestoreRefuses(t *testing.T) {
	t.Parallel()
	const want = "app/l: symlink target is empty, holds a NUL or is longer than 4095 bytes"
	for _, tt := range []struct{ name, target string }{{"empty", ""}, {"NUL", "a\x00b"}, {"too long", strings.Repeat("a/", 2048)}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}, "l": {kind: "symlink", content: "a.txt"}})
			arch := filepath.Join(dir, "l.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "--symlinks", "store", "-o", arch, "app"), exitComplete)
			hostile := filepath.Join(dir, "hostile.zip")
			rewriteManifest(t, arch, filepath.Join(dir, "m.zip"), func(m map[string]any) {
				m["symlinks"].([]any)[0].(map[string]any)["target"] = tt.target
			})
			rewriteEntry(t, filepath.Join(dir, "m.zip"), hostile, "app/l", tt.target)
			v := backup(t, runOpts{dir: dir}, "verify", hostile)
			if v.code != exitFailed || !strings.Contains(v.stderr, want+"\n") {
				t.Errorf("verify: exit %d %q; want %d and %q", v.code, v.stderr, exitFailed, want)
			}
			r := backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest"))
			if r.code != exitFailed || !strings.Contains(r.stderr, want+" (not restored)\n") {
				t.Errorf("restore: exit %d %q; want %d and %q", r.code, r.stderr, exitFailed, want)
			}
		})
	}
}

// rewriteEntry copies the zip in to out with the data of the entry name replaced by data,
// its headers otherwise kept (its owner field among them).
func rewriteEntry(t *testing.T, in, out, name, data string) {
	t.Helper()
	zr, err := zip.OpenReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		if e.Name != name {
			if err := zw.Copy(e); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fh := e.FileHeader
		fh.Method = zip.Store
		w, err := zw.CreateHeader(&fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
