package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAttackSQLiteShmHardLinkOverwritten: nobody, who may write into the tree, lays out a
// WAL database of his with commits in its -wal, and makes its -shm a hard link to a file of
// another user's that he may write (mode 0666, uid 1000, outside the tree: the kernel's
// protected_hardlinks allows the link). Root's run read the database through a read-only
// connection, and SQLite, finding no other connection, opened the -shm read-write, truncated
// it and wrote its WAL index there: the other user's 23-byte file became 32 KiB of SQLite's
// index, its contents gone, and the run said complete.
//
// Expected: the run only reads: the outside file keeps its bytes, size and mtime (a -shm
// that is a hard link is read, if at all, read-only), and the database is either snapshotted
// whole or lost with a warning (exit 3).
func TestAttackSQLiteShmHardLinkOverwritten(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	app, alice := filepath.Join(dir, "app"), filepath.Join(dir, "alice")
	makeTree(t, app, map[string]node{".": {kind: "dir", mode: 0o777}})
	makeTree(t, alice, map[string]node{"shared": {content: "alice's precious notes\n", mode: 0o666}})
	shared := filepath.Join(alice, "shared")
	if err := os.Chown(shared, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "w.db")
	w := openSQLite(t, other, "wal")
	sqlExec(t, w, "PRAGMA wal_autocheckpoint = 0")
	addRows(t, w, 5, 100)
	db := filepath.Join(app, "x.db")
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(other + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(db+suffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(db+suffix, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	ln := exec.Command("ln", shared, db+"-shm")
	ln.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := ln.CombinedOutput(); err != nil {
		t.Fatalf("nobody's hard link: %v %s", err, out)
	}
	before := stateOf(t, shared)
	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	if after := stateOf(t, shared); after != before {
		t.Fatalf("alice's file, hard-linked as x.db-shm, was written: now %d bytes %q (exit %d: %s)", len(after.data), after.data[:min(len(after.data), 16)], r.code, r.stderr)
	}
	switch r.code {
	case exitComplete:
		if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "x.db")); got.count != 5 {
			t.Errorf("the restored database holds %d rows, want the 5 committed", got.count)
		}
	case exitIncomplete:
		if _, ok := readZipGo(t, archive)["app/x.db"]; ok {
			t.Error("exit 3 and app/x.db in the archive, want it lost")
		}
	default:
		t.Errorf("exit %d, want 0 or 3\n%s", r.code, r.stderr)
	}
}
