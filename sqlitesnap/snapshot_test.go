package sqlitesnap

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// allowWrites lets SQLite in this process write the database at path and its sidecars, as
// the application whose database it is: once a test has taken a snapshot, guardedOpen lets
// it write only staged copies.
func allowWrites(t *testing.T, path string) {
	t.Helper()
	staged.Store(filepath.Base(path), struct{}{})
	t.Cleanup(func() { staged.Delete(filepath.Base(path)) })
}

// openDB opens (creating) the database at path for writing, in journal mode mode.
func openDB(t *testing.T, path, mode string) *sql.DB {
	t.Helper()
	allowWrites(t, path)
	db, err := sql.Open("sqlite", uri(path, "_pragma=journal_mode("+mode+")", "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	exec(t, db, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
	return db
}

func exec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func insertRows(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	for i := range n {
		exec(t, db, "INSERT INTO t (v) VALUES (?)", strings.Repeat(fmt.Sprint(i), 100))
	}
}

// countRows counts the rows of t in the database file f, checking its integrity first.
func countRows(t *testing.T, f *os.File) int {
	t.Helper()
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	allowWrites(t, copyPath) // read-only, a WAL database makes its -shm
	data, err := os.ReadFile(f.Name())
	if err != nil {
		// The snapshot's name is gone: read it through its descriptor.
		data, err = os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", uri(copyPath, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	var n int
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check of the snapshot: %q, %v", check, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func source(t *testing.T, path string) Source {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return Source{File: f, Dir: filepath.Dir(path), Name: filepath.Base(path)}
}

// emptyDir fails the test when dir holds anything.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("staging folder holds %v, want nothing left", names)
	}
}

func TestTakeHoldsEveryCommit(t *testing.T) {
	for _, mode := range []string{"wal", "delete"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			db := openDB(t, path, mode)
			insertRows(t, db, 300) // in WAL mode, still in -wal: the connection stays open
			stage := t.TempDir()
			s, err := Take(t.Context(), source(t, path), Options{Dir: stage})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			emptyDir(t, stage)
			if got := countRows(t, s.File); got != 300 {
				t.Errorf("snapshot holds %d rows, want 300", got)
			}
		})
	}
}

func TestTakeFailsClosedWhenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	db := openDB(t, path, "delete")
	insertRows(t, db, 10)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(t.Context(), "ROLLBACK")
	stage := t.TempDir()
	_, err = Take(t.Context(), source(t, path), Options{Dir: stage, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("Take of a database held by BEGIN EXCLUSIVE: %v, want a locked error", err)
	}
	emptyDir(t, stage)
}

func TestTakeRefusesASwappedFile(t *testing.T) {
	for _, swap := range []string{"symlink", "rename"} {
		t.Run(swap, func(t *testing.T) {
			dir := t.TempDir()
			path, secret := filepath.Join(dir, "app.db"), filepath.Join(t.TempDir(), "secret.db")
			insertRows(t, openDB(t, path, "delete"), 1)
			insertRows(t, openDB(t, secret, "delete"), 5)
			opts := Options{Dir: t.TempDir(), beforeOpen: func() {
				os.Rename(path, path+".old")
				if swap == "symlink" {
					os.Symlink(secret, path)
				} else {
					os.Link(secret, path)
				}
			}}
			s, err := Take(t.Context(), source(t, path), opts)
			if err == nil {
				s.Close()
			}
			if err != errReplaced {
				t.Errorf("Take of a database swapped for a %s: %v, want %v", swap, err, errReplaced)
			}
			emptyDir(t, opts.Dir)
		})
	}
}

func TestTakeRefusesWhatIsNotADatabase(t *testing.T) {
	for name, data := range map[string]string{
		"corrupt header": "SQLite format 3\x00" + strings.Repeat("\xff", 4096),
		"encrypted":      "SQLite format 3\x00" + strings.Repeat("\x13\x37", 2048),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			stage := t.TempDir()
			s, err := Take(t.Context(), source(t, path), Options{Dir: stage})
			if err == nil {
				s.Close()
				t.Fatal("Take of a file that is not a valid database succeeded, want an error")
			}
			emptyDir(t, stage)
		})
	}
}

// TestTakeLeavesACleanDatabaseAlone: a WAL database that no connection has open is copied
// without leaving a -wal or -shm beside it.
func TestTakeLeavesACleanDatabaseAlone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "clean.db")
	db := openDB(t, path, "wal")
	insertRows(t, db, 20)
	db.Close()
	s, err := Take(t.Context(), source(t, path), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := countRows(t, s.File); got != 20 {
		t.Errorf("snapshot holds %d rows, want 20", got)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		t.Errorf("the database's folder holds %v after the snapshot, want clean.db alone", names)
	}
}

// TestTakeWaitsForAWriterAfterTheCopy: a rollback-journal database whose writer commits
// without a pause, each commit holding its lock a little longer than the busy handler's
// 100ms at a time (a slow disk's fsync). The online backup retries its step until
// --sqlite-timeout, but the query that then asks SQLite which file it read
// (pragma_database_list, a table-valued function) loads the schema first, which needs the
// lock: a writer that took it between the two failed the copy at once with "database is
// locked", and a database that the copy had read whole was lost, 3 s of timeout unused
// (about one run in 15 against a writer committing in a loop).
//
// Expected: that query takes no lock; the snapshot holds the 10 rows the backup read.
func TestTakeWaitsForAWriterAfterTheCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := openDB(t, path, "delete")
	insertRows(t, db, 10)
	committed := make(chan error, 1)
	opts := Options{Dir: t.TempDir(), Timeout: 5 * time.Second, backedUp: func() {
		conn, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer conn.Close()
			time.Sleep(300 * time.Millisecond)
			_, err := conn.ExecContext(t.Context(), "INSERT INTO t (v) VALUES ('late')")
			if err == nil {
				_, err = conn.ExecContext(t.Context(), "COMMIT")
			}
			committed <- err
		}()
	}}
	s, err := Take(t.Context(), source(t, path), opts)
	if cerr := <-committed; cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatalf("Take of a database a writer locked for 300ms after the copy: %v", err)
	}
	defer s.Close()
	if got := countRows(t, s.File); got != 10 {
		t.Errorf("snapshot holds %d rows, want the 10 committed before the copy", got)
	}
}

// TestStaleShmOnlyWithoutConnections: a -shm is taken for stale (and the database copied
// with its -wal, the -shm unread) only when no other process has the database open; a
// connection that has it open, idle, keeps its lock on the -shm, and one whose process was
// killed leaves none.
func TestStaleShmOnlyWithoutConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	app := sqliteApp(t, path, `
c.execute("PRAGMA journal_mode=wal")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
c.execute("INSERT INTO t (v) VALUES ('a')")
`)
	if staleShm(source(t, path)) {
		t.Error("the -shm of a database another process has open was taken for stale")
	}
	app.Process.Kill()
	app.Wait()
	if !staleShm(source(t, path)) {
		t.Error("the -shm a killed process left was not taken for stale")
	}
}

// TestTakeImmutableReadTornByACheckpoint: a WAL database whose writer checkpoints with
// TRUNCATE after each commit has an empty -wal most of the time, and is read as immutable,
// without locks; a commit and its checkpoint that write the database while it is read leave
// the copy torn. The copy is checked afterwards for a change, and read again the usual way;
// but when the torn pages made the backup itself fail (SQLITE_CORRUPT), the error was
// returned as it was, before that check: the sound database was lost as "not a valid
// database, though it begins like one" (one run in 8 against such a writer).
//
// Expected: a failed immutable read of a database that changed meanwhile is read again the
// usual way, into a staged file emptied first (the usual backup into the torn copy reads
// its first page, and fails on it too), and the snapshot holds every row.
func TestTakeImmutableReadTornByACheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := openDB(t, path, "wal")
	insertRows(t, db, 50)
	exec(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
	sound, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// As the checkpoint's writes, half done, leave it to a reader without locks: its first
	// page's b-tree header, past the file's 100-byte header, is garbage.
	torn := bytes.Clone(sound)
	copy(torn[100:112], bytes.Repeat([]byte{0xff}, 12))
	opts := Options{
		Dir:           t.TempDir(),
		beforeOpen:    func() { os.WriteFile(path, torn, 0o644) },
		immutableRead: func() { os.WriteFile(path, sound, 0o644) },
	}
	s, err := Take(t.Context(), source(t, path), opts)
	if err != nil {
		t.Fatalf("Take of a sound database, torn while it was read as immutable: %v", err)
	}
	defer s.Close()
	if got := countRows(t, s.File); got != 50 {
		t.Errorf("snapshot holds %d rows, want 50", got)
	}
}

// TestTakeWaitsForAnExclusiveModeWriter: a WAL database whose application holds it in
// exclusive locking mode uses no -shm, so its commits sit in a -wal with no -shm beside it,
// as after a crash; and it was copied as such a database is, with its -wal, without locks,
// trusted because neither file's size, mtime or change time moved meanwhile. But the writer
// is live, and on a file system whose times count whole seconds (ext2 or ext3 with 128-byte
// inodes, FAT) its commits and checkpoints within the copy's second move none of them: 3
// snapshots in 12 of a writer that updates two tables together in each commit held one
// table's update without the other's, integrity_check ok, the run complete.
//
// Expected: a database another process holds locked is read only through SQLite, which
// waits for the lock up to --sqlite-timeout; held still, it is lost as locked.
func TestTakeWaitsForAnExclusiveModeWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	sqliteApp(t, path, `
c.execute("PRAGMA locking_mode=exclusive")
c.execute("PRAGMA journal_mode=wal")
c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
for i in range(10):
    c.execute("INSERT INTO t (v) VALUES ('a')")
`)
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Fatal("the exclusive-mode writer made a -shm")
	}
	stage := t.TempDir()
	s, err := Take(t.Context(), source(t, path), Options{Dir: stage, Timeout: 300 * time.Millisecond})
	if err == nil {
		s.Close()
		t.Fatal("a database its writer holds in exclusive locking mode was copied without its lock")
	}
	if !strings.Contains(err.Error(), "locked") {
		t.Errorf("Take: %v, want a locked error", err)
	}
	emptyDir(t, stage)
}

// sqliteApp runs, in a process of its own, an application that opens the database at path
// with Python's sqlite3 (as c), runs statements (Python), and then keeps it open until the
// test ends or the returned process is killed: SQLite's locks are a process's, so another
// one has to hold them.
func sqliteApp(t *testing.T, path, statements string) *osexec.Cmd {
	t.Helper()
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	app := osexec.Command("python3", "-c", `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
`+statements+`
print("ready", flush=True)
sys.stdin.read()
`, path)
	stdin, err := app.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		app.Process.Kill()
		app.Wait()
	})
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	return app
}
