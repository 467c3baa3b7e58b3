package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"testing"
)

// TestAttackForceWithoutFolderEntries: a zip that holds app/a but no entry for the folder
// app/ (as zip -D, Python's writestr and many tools write them), restored with --force into
// a DEST that lacks app. Nothing there is replaced, but the before-state was asked to save
// app, the folder above what the restore creates, which does not exist: "before-state:
// source DEST/app: no such file or directory; nothing restored", exit 1. Without --force the
// same restore is complete.
func TestAttackForceWithoutFolderEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "nodirs.zip")
	f, err := os.Create(arch)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("app/a")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("alpha\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, dest := range []string{filepath.Join(dir, "fresh"), filepath.Join(dir, "existing")} {
		if filepath.Base(dest) == "existing" {
			os.Mkdir(dest, 0o755)
		}
		r := backup(t, runOpts{dir: dir}, "restore", "--force", arch, dest)
		mustExit(t, r, exitComplete)
		if got, err := os.ReadFile(filepath.Join(dest, "app/a")); err != nil || string(got) != "alpha\n" {
			t.Errorf("%s/app/a: %q, %v", dest, got, err)
		}
	}
}
