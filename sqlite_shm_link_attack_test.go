package main

import (
	"os"
	"path/filepath"
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
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{".": {kind: "dir", mode: 0o777}})
	shared := alicesFile(t, dir, "alice's precious notes\n")
	other := filepath.Join(t.TempDir(), "w.db")
	walDB(t, other, 5, 100)
	db := filepath.Join(app, "x.db")
	copyDB(t, other, db, "-wal")
	for _, p := range []string{db, db + "-wal"} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	linkAsNobody(t, shared, db+"-shm")
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
