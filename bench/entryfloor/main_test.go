package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// writeZip writes an archive of a folder and two files, one stored and one deflated.
func writeZip(t *testing.T, deflated []byte) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	mtime := time.Date(2020, 5, 6, 7, 8, 10, 0, time.UTC)
	for _, e := range []struct {
		name   string
		method uint16
		data   []byte
	}{{"d/", zip.Store, nil}, {"d/stored.txt", zip.Store, []byte("plain data")}, {"d/deflated.txt", zip.Deflate, deflated}} {
		h := &zip.FileHeader{Name: e.name, Method: e.method, Modified: mtime}
		h.SetMode(0o640)
		w, err := z.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRestoreWritesEveryEntry: the restore floors, with restore's rules and without, write
// every file, its data, mode and time, so that they pay what a restore must.
func TestRestoreWritesEveryEntry(t *testing.T) {
	for _, rules := range []bool{false, true} {
		t.Run(map[bool]string{false: "restore", true: "restore-rules"}[rules], func(t *testing.T) {
			testRestoreWrites(t, rules)
		})
	}
}

func testRestoreWrites(t *testing.T, rules bool) {
	data := bytes.Repeat([]byte("a line of text\n"), 5000)
	dest := filepath.Join(t.TempDir(), "out")
	if err := run(writeZip(t, data), dest, rules); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"d/stored.txt": []byte("plain data"), "d/deflated.txt": data} {
		p := filepath.Join(dest, name)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
			continue
		}
		st, _ := os.Stat(p)
		if st.Mode().Perm() != 0o640&^umask(t) || !st.ModTime().Equal(time.Date(2020, 5, 6, 7, 8, 10, 0, time.UTC)) {
			t.Errorf("%s: mode %v, time %v", name, st.Mode(), st.ModTime())
		}
	}
}

// TestDamageFails: an entry whose data does not match its CRC-32 fails the floor.
func TestDamageFails(t *testing.T) {
	p := writeZip(t, []byte("some data to be damaged"))
	b, _ := os.ReadFile(p)
	b[bytes.Index(b, []byte("plain data"))] = 'P'
	os.WriteFile(p, b, 0o600)
	if err := run(p, "", false); err == nil || !strings.Contains(err.Error(), "d/stored.txt: size or crc-32 mismatch") {
		t.Errorf("a damaged entry: %v", err)
	}
}

// umask is the process's file mode creation mask.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	old := unix.Umask(0)
	unix.Umask(old)
	return os.FileMode(old)
}

// TestRulesFloorNoticesAMove: the floor with restore's rules watches its folders and polls
// them before each link, as restore does, so a folder moved between a file's making and its
// link stops it.
func TestRulesFloorNoticesAMove(t *testing.T) {
	dest, out, f, e := madeByRules(t, "a/b/f")
	if err := os.Rename(filepath.Join(dest, "a"), filepath.Join(dest, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := out.finish(f, e.Name, e); !errors.Is(err, errMoved) {
		t.Errorf("a file linked after its folder moved: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "moved", "b", "f")); !os.IsNotExist(err) {
		t.Errorf("the file was linked into the moved folder: %v", err)
	}
}

// TestRulesFloorPollsAgainAfterASignal: a poll cut short by a signal (EINTR, which the Go
// runtime's preemption causes) is not a folder moved: the floor polls again and links the
// file, as restore's guard does. It stopped a bench run once.
func TestRulesFloorPollsAgainAfterASignal(t *testing.T) {
	interrupted := 0
	poll = func(fds []unix.PollFd, timeout int) (int, error) {
		if interrupted < 2 {
			interrupted++
			return -1, unix.EINTR
		}
		return unix.Poll(fds, timeout)
	}
	defer func() { poll = unix.Poll }()
	dest, out, f, e := madeByRules(t, "a/f")
	if err := out.finish(f, e.Name, e); err != nil {
		t.Fatalf("a poll cut short by a signal stopped the floor: %v", err)
	}
	if interrupted != 2 {
		t.Errorf("poll was cut short %d times, want 2", interrupted)
	}
	if _, err := os.Lstat(filepath.Join(dest, "a", "f")); err != nil {
		t.Errorf("the file was not linked: %v", err)
	}
}

// madeByRules makes the file name, unnamed and not yet linked, in a new tree DEST/out that
// keeps restore's rules; the tree is closed when the test ends.
func madeByRules(t *testing.T, name string) (dest string, out *tree, f *os.File, e *zip.File) {
	t.Helper()
	dest = filepath.Join(t.TempDir(), "out")
	out, err := newTree(dest, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(out.close)
	e = &zip.File{FileHeader: zip.FileHeader{Name: name, Modified: time.Now()}}
	e.SetMode(0o644)
	if f, err = out.create(e.Name, e); err != nil {
		t.Fatal(err)
	}
	return dest, out, f, e
}
