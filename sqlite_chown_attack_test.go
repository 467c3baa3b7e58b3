package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackSQLiteSidecarHardLinkChowned: nobody, who may write into the tree, makes the
// -journal (beside a rollback-journal database of his) or the -wal (beside a WAL database of
// his, with a -shm) a hard link to a file of another user's that he may write (mode 0666,
// uid 1000, outside the tree: the kernel's protected_hardlinks allows the link). Root's run
// had SQLite open that sidecar, and SQLite, running as root, gives each journal and -wal it
// opens to the database's owner (robustFchown): the other user's file became nobody's, who
// may then chmod it, and its change time moved. Every run also moved the ctime of a live
// database's -wal.
//
// Expected: the run only reads: the outside file keeps its owner, mode and change time.
func TestAttackSQLiteSidecarHardLinkChowned(t *testing.T) {
	mustRoot(t)
	for _, tt := range []struct{ mode, sidecar string }{{"delete", "-journal"}, {"wal", "-wal"}} {
		t.Run(tt.sidecar, func(t *testing.T) {
			t.Parallel()
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			makeTree(t, app, map[string]node{".": {kind: "dir", mode: 0o777}})
			shared := alicesFile(t, dir, "alice's notes\n")
			db := filepath.Join(app, "x.db")
			w := openSQLite(t, db, tt.mode)
			sqlExec(t, w, "PRAGMA wal_autocheckpoint = 0")
			addRows(t, w, 3, 100)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(db, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			if tt.mode == "wal" { // a -shm, so that SQLite reads the -wal the usual way
				if err := os.WriteFile(db+"-shm", nil, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Chown(db+"-shm", nobody, nobody)
			}
			linkAsNobody(t, shared, db+tt.sidecar)
			var before, after syscall.Stat_t
			if err := syscall.Stat(shared, &before); err != nil {
				t.Fatal(err)
			}
			r := backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(dir, "b.zip"), "app")
			if err := syscall.Stat(shared, &after); err != nil {
				t.Fatal(err)
			}
			if after.Uid != before.Uid || after.Gid != before.Gid || after.Ctim != before.Ctim {
				t.Errorf("alice's file, hard-linked as %s: owner %d:%d, ctime %d; was %d:%d, ctime %d (exit %d: %s)",
					tt.sidecar, after.Uid, after.Gid, after.Ctim.Nano(), before.Uid, before.Gid, before.Ctim.Nano(), r.code, strings.TrimSpace(r.stderr))
			}
		})
	}
}
