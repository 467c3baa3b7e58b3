package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackPresentFileLosesCapabilityToSameOwnerChown: as root, a plain restore (no
// --xattrs, no --same-permissions) of an archive made without --xattrs, into a DEST whose
// app/ping holds the archived bytes, owner and mode, with a file capability (cap_net_raw)
// the archive says nothing of, and another mtime. Only the mtime differs, and only it was to
// be set ("only its owner, mode and mtime are set where they differ"); but the file was given
// its owner again in place, a chown to the owner it had, and the kernel drops
// security.capability (and setuid bits) on any chown: ping lost its capability, in a restore
// that sets no attributes. Correct: an owner the file has already is not given again, so a
// restore that fixes a kept file's mtime leaves its attributes as they are.
func TestAttackPresentFileLosesCapabilityToSameOwnerChown(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"ping": {content: "#!/bin/sh\n", mode: 0o755}})
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "src/app/ping"), old, old); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"ping": {content: "#!/bin/sh\n", mode: 0o755}})
	ping := filepath.Join(dest, "app/ping")
	// cap_net_raw, effective and permitted: VFS_CAP_REVISION_2, one 32-bit set.
	capRaw := []byte{0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if err := unix.Setxattr(ping, "security.capability", capRaw, 0); err != nil {
		t.Skipf("no file capabilities here: %v", err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "1 file already there") {
		t.Errorf("app/ping not kept as present: %s", r.stderr)
	}
	if fi, err := os.Stat(ping); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("app/ping: mtime not set: %v %v", fi, err)
	}
	if _, err := unix.Getxattr(ping, "security.capability", make([]byte, 64)); err != nil {
		t.Errorf("app/ping lost its file capability to a restore that set only its mtime: %v", err)
	}
}
