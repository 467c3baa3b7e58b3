package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
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

// TestAttackUndoLeavesImplicitFolder: the undo of restore --force of a backup whose folder
// entries were left out (app/sub/a, no app/ nor app/sub/, the manifest listing no folders)
// into an empty DEST removes app/sub/a but leaves app and app/sub, folders the restore
// made: the before-state's "created" lists only the entries.
func TestAttackUndoLeavesImplicitFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"sub/a": {content: "alpha\n"}})
	full := filepath.Join(dir, "full.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", full, "app"), exitComplete)
	edited := filepath.Join(dir, "edited.zip")
	rewriteManifest(t, full, edited, func(m map[string]any) { m["dirs"] = []any{} })
	arch := filepath.Join(dir, "nodirs.zip")
	zr, err := zip.OpenReader(edited)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := os.Create(arch)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		if !strings.HasSuffix(e.Name, "/") {
			if err := zw.Copy(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", arch), exitComplete)

	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", arch, dest), exitComplete)
	before, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(before) != 1 {
		t.Fatalf("before-states: %q", before)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--same-permissions", "--xattrs", before[0], dest), exitComplete)
	if got := listDir(t, dest); len(got) != 0 {
		t.Errorf("after the undo DEST holds %q, was empty", got)
	}
}
