package main

import (
	"context"
	be "encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// superJournalRecord is what SQLite appends to each database's journal in a transaction
// across databases (writeSuperJournal in pager.c): the lock-byte page's number, the
// super-journal's name, its length, the sum of its bytes and the journal's magic.
func superJournalRecord(name string, pageSize int) []byte {
	var rec []byte
	rec = be.BigEndian.AppendUint32(rec, uint32(0x40000000/pageSize+1))
	rec = append(rec, name...)
	var sum uint32
	for _, c := range []byte(name) {
		sum += uint32(c)
	}
	rec = be.BigEndian.AppendUint32(rec, uint32(len(name)))
	rec = be.BigEndian.AppendUint32(rec, sum)
	return append(rec, 0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7)
}

// TestAttackSQLiteHotJournalSuperJournal: whoever may write into the tree plants a database
// with a hot journal (a writer killed mid-transaction) and appends to the journal a
// super-journal record (the mark of a transaction across databases) naming a path of their
// choice, anywhere, with a super-journal's shape (NAME-mjHHHHHH9HH, which SQLite 3.54
// insists on). Root's run copies the pair into the staging folder and has SQLite roll the
// copy back; SQLite, rolling back, looks the super-journal up by that name, opens it, reads
// it as a list of journals and opens each (pager_delsuper), then deletes it if it lists the
// copy's journal:
//   - fifo: a FIFO at that name blocks SQLite's open for ever: the nightly run hangs, past
//     any --sqlite-timeout and Ctrl-C (here it is killed after 8 s);
//   - file: root's file outside the tree is opened and read, and the run says complete.
//
// Expected: a hot journal that names a super-journal is not rolled back by SQLite here (the
// name leads outside what the run may touch); the database is lost, said why (exit 3), and
// the named file is untouched.
func TestAttackSQLiteHotJournalSuperJournal(t *testing.T) {
	mustRoot(t)
	for _, kind := range []string{"file", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			app := filepath.Join(dir, "app")
			makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
			db := filepath.Join(app, "state.db")
			hotJournal(t, db)
			victim := filepath.Join(t.TempDir(), "victim-mj0123459ab")
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(victim, 0o600)
			} else {
				err = os.WriteFile(victim, []byte("precious\n"), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			appendSuperJournal(t, db, victim)
			archive := filepath.Join(dir, "b.zip")
			ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "create", "-o", archive, "app")
			cmd.Dir = dir
			r := runCmd(t, cmd)
			if ctx.Err() != nil {
				t.Fatalf("the run hung (killed after 8 s): %s", strings.TrimSpace(r.stderr))
			}
			if _, err := os.Lstat(victim); err != nil {
				t.Fatalf("the file the journal named as its super-journal, outside the tree: %v (exit %d: %s)", err, r.code, strings.TrimSpace(r.stderr))
			}
			mustExit(t, r, exitIncomplete)
			if !strings.Contains(r.stderr, "app/state.db") || !strings.Contains(r.stderr, "super-journal") {
				t.Errorf("stderr %q, want one line naming app/state.db and its super-journal", r.stderr)
			}
			if _, ok := readZipGo(t, archive)["app/state.db"]; ok {
				t.Error("the archive holds app/state.db, want it lost")
			}
			if left := spoolsIn(t, dir); len(left) > 0 {
				t.Errorf("staged copies left behind: %v", left)
			}
		})
	}
}

// appendSuperJournal appends to db's journal a super-journal record naming name.
func appendSuperJournal(t *testing.T, db, name string) {
	t.Helper()
	head := make([]byte, 18)
	f, err := os.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadAt(head, 0)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(be.BigEndian.Uint16(head[16:]))
	j, err := os.OpenFile(db+"-journal", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Write(superJournalRecord(name, pageSize)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
