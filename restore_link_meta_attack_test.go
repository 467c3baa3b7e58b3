package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackLinkGroupOfDifferentModes: a manifest that puts two files of the same content
// but different modes in one hard-link group (app/pub.txt 0644, app/secret.txt 0600, "link": 1
// on both). One file has one mode, so restore linking them gave app/secret.txt the mode of
// app/pub.txt, readable by everyone, and said complete (exit 0); a re-run then kept it so.
// Members recorded with another owner, mode, mtime or attributes than the group's file
// stay separate files holding their own metadata, with a warning, as those recorded with
// other content do.
func TestAttackLinkGroupOfDifferentModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := linkedArchive(t, dir, map[string]node{
		"pub.txt":    {content: "same\n", mode: 0o644},
		"secret.txt": {content: "same\n", mode: 0o600},
	})
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--jobs", "1", arch, dest)
	mustExit(t, r, exitComplete)
	for name, want := range map[string]os.FileMode{"app/pub.txt": 0o644, "app/secret.txt": 0o600} {
		fi, err := os.Lstat(filepath.Join(dest, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, the manifest records %v (stderr %q)", name, got, want, r.stderr)
		}
	}
	want := "app/secret.txt: restored as a separate file, not a hard link of app/pub.txt: the manifest records another owner, mode, mtime or attributes for it"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q: want %q", r.stderr, want)
	}
}

// TestAttackLinkGroupSetuidOfAnother: as root with --same-permissions, a group whose
// app/tool is root's and setuid and whose app/zcopy, of the same bytes, is nobody's 0755.
// Linking them made app/zcopy a name of the root-owned setuid file: a setuid bit on a name
// recorded as another user's, plain, which the README gives only with its recorded owner.
func TestAttackLinkGroupSetuidOfAnother(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("owners and setuid bits are restored only as root")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src/app")
	makeTree(t, src, map[string]node{"tool": {content: "#!/bin/true\n"}, "zcopy": {content: "#!/bin/true\n"}})
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, owner := range map[string]int{"tool": 0, "zcopy": 65534} {
		path := filepath.Join(src, name)
		if err := os.Chown(path, owner, owner); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "tool"), 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "zcopy"), 0o755); err != nil {
		t.Fatal(err)
	}
	arch := archiveAsLinked(t, dir)
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--same-permissions", "--jobs", "1", arch, dest)
	mustExit(t, r, exitComplete)
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dest, "app/zcopy"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 65534 || st.Mode&unix.S_ISUID != 0 {
		t.Errorf("app/zcopy: owner %d, mode %o; the manifest records nobody's 0755 (stderr %q)", st.Uid, st.Mode&0o7777, r.stderr)
	}
}
