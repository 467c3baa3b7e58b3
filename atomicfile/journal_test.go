package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var testKind = JournalKind{Prefix: ".test-", Suffix: ".journal", Header: "test journal 1\n"}

func openDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// sweep sweeps every journal of k in dir and returns the records handed over, each with
// its journal's token, and the journals removed.
func sweep(t *testing.T, k JournalKind, dir string) (records, removed []string) {
	t.Helper()
	fd := openDir(t, dir)
	for _, name := range k.List(fd) {
		if k.Sweep(fd, name, func(tmp, token string) { records = append(records, token+":"+tmp) }) {
			removed = append(removed, name)
		}
	}
	return records, removed
}

// TestJournal: a live run's journal (locked) hands nothing over; once the run is dead, its
// records are handed over with its token, the one cut short is not, and the journal goes.
func TestJournal(t *testing.T) {
	dir := t.TempDir()
	j, err := testKind.Create(openDir(t, dir), func(name string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	tmp := "a" + j.Next()
	if err := j.Record(tmp); err != nil {
		t.Fatal(err)
	}
	if got, removed := sweep(t, testKind, dir); got != nil || removed != nil {
		t.Errorf("a live run's journal: records %q, removed %q; want none", got, removed)
	}
	f, _ := os.OpenFile(filepath.Join(dir, j.Name()), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("cut-short")
	f.Close()
	j.Close()
	got, removed := sweep(t, testKind, dir)
	if want := []string{j.Token + ":" + tmp}; !slices.Equal(got, want) || !slices.Equal(removed, []string{j.Name()}) {
		t.Errorf("a dead run's journal: records %q, removed %q; want %q and the journal", got, removed, want)
	}
}

// TestJournalTrust: what a journal that no dead run of this user's left (or not yet whole)
// lists is never handed over; CopyProof and SweepHeaderless say what else is refused or
// removed.
func TestJournalTrust(t *testing.T) {
	copyProof, headerless := testKind, testKind
	copyProof.CopyProof = true
	headerless.SweepHeaderless = true
	tests := []struct {
		name    string
		kind    JournalKind
		content string
		prepare func(path string)
		removed bool
	}{
		{"dead", testKind, testKind.Header + "x\x00", nil, true},
		{"another header", testKind, "other journal 1\nx\x00", nil, false},
		{"header cut short", testKind, "test jour", nil, false},
		{"header cut short, swept", headerless, "test jour", nil, true},
		{"empty, swept", headerless, "", nil, true},
		{"writable by others", testKind, testKind.Header + "x\x00", func(p string) { os.Chmod(p, 0o622) }, true},
		{"writable by others, copy-proof", copyProof, testKind.Header + "x\x00", func(p string) { os.Chmod(p, 0o622) }, false},
		{"mtime set apart, copy-proof", copyProof, testKind.Header + "x\x00", func(p string) {
			os.Chtimes(p, time.Time{}, time.Unix(1e9, 0))
		}, false},
		{"another user's", testKind, testKind.Header + "x\x00", func(p string) { os.Chown(p, 65534, 65534) }, false},
		{"a symlink", testKind, testKind.Header + "x\x00", func(p string) {
			os.Rename(p, p+".real")
			os.Symlink(filepath.Base(p)+".real", p)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.kind.Prefix+"k1"+tt.kind.Suffix)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.prepare != nil {
				tt.prepare(path)
			}
			_, removed := sweep(t, tt.kind, dir)
			if got := len(removed) == 1; got != tt.removed {
				t.Errorf("removed %q, want removed %v", removed, tt.removed)
			}
		})
	}
}

// TestJournalLimit: records past Limit count as cut short.
func TestJournalLimit(t *testing.T) {
	dir := t.TempDir()
	k := testKind
	k.Limit = int64(len(k.Header) + len("a\x00b"))
	os.WriteFile(filepath.Join(dir, k.Prefix+"k1"+k.Suffix), []byte(k.Header+"a\x00b\x00"), 0o600)
	if got, _ := sweep(t, k, dir); !slices.Equal(got, []string{"k1:a"}) {
		t.Errorf("records %q, want k1:a alone", got)
	}
}

// TestJournalSweptBeforeLock: another run's sweep removes a new journal in the moment between
// its creation and its lock (unlocked, no header: what a run killed there leaves). Create
// must not go on with a journal no one can find: it makes another. Once, it went on, and a
// later kill left temp files that no journal proved.
func TestJournalSweptBeforeLock(t *testing.T) {
	dir := t.TempDir()
	fd := openDir(t, dir)
	swept := 0
	testHookBeforeLock = func(dirfd int, name string) {
		if swept == 0 {
			swept++
			if err := unix.Unlinkat(dirfd, name, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { testHookBeforeLock = nil })
	j, err := testKind.Create(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Remove()
	if got := testKind.List(fd); !slices.Equal(got, []string{filepath.Base(j.Name())}) {
		t.Errorf("journals in DIR: %q, want the live one, %s", got, filepath.Base(j.Name()))
	}
}
