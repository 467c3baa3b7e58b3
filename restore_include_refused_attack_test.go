package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackIncludeHidesUnsafeName: an archive holding a safe entry ok/a and an unsafe one
// (bad/../../x), restored with --include ok/a. The restore is refused, as any restore of an
// archive with an unsafe name is, but the one line says "no entry matches --include": a
// cause that is not the cause, and ok/a does match. It must name the unsafe entry.
func TestAttackIncludeHidesUnsafeName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "mixed.zip")
	f, err := os.Create(arch)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range []string{"ok/a", "bad/../../x"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--include", "ok/a", arch, dest)
	mustExit(t, r, exitFailed)
	if strings.Contains(r.stderr, "no entry matches") || !strings.Contains(r.stderr, `bad/../../x: unsafe name: ".." component`) {
		t.Errorf("stderr does not name the unsafe entry that refused the restore:\n%s", r.stderr)
	}
	if _, err := os.Lstat(dest); err == nil {
		t.Errorf("restore refused, but made %s", dest)
	}
}
