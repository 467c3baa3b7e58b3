package eintr

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// cutShort returns a call that fails with EINTR its first n times, then makes call. With
// doneFirst, its first try makes call before it fails, as a server that did the call before
// the signal came; tries counts the tries.
func cutShort(n int, doneFirst bool, call func() error) (func() error, *int) {
	tries := 0
	return func() error {
		tries++
		if tries <= n {
			if doneFirst && tries == 1 {
				if err := call(); err != nil {
					panic(err)
				}
			}
			return unix.EINTR
		}
		return call()
	}, &tries
}

func folder(t *testing.T) (string, int) {
	t.Helper()
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return dir, fd
}

func fileID(t *testing.T, path string) ID {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return IDOf(&st)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A link or rename cut short is repeated when it was not done, and taken as done when the
// name holds the file after it: a repeat would fail, or undo an exchange.
func TestMoveNameTellsDoneFromNotDone(t *testing.T) {
	for _, tt := range []struct {
		name      string
		flags     uint
		doneFirst bool
		want      map[string]string // what the names hold after
	}{
		{"rename not done", unix.RENAME_NOREPLACE, false, map[string]string{"to": "new"}},
		{"rename done", unix.RENAME_NOREPLACE, true, map[string]string{"to": "new"}},
		{"exchange not done", unix.RENAME_EXCHANGE, false, map[string]string{"to": "new", "from": "old"}},
		{"exchange done", unix.RENAME_EXCHANGE, true, map[string]string{"to": "new", "from": "old"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, fd := folder(t)
			write(t, filepath.Join(dir, "from"), "new")
			if tt.flags == unix.RENAME_EXCHANGE {
				write(t, filepath.Join(dir, "to"), "old")
			}
			moving := fileID(t, filepath.Join(dir, "from"))
			call, tries := cutShort(1, tt.doneFirst, func() error { return unix.Renameat2(fd, "from", fd, "to", tt.flags) })
			if err := moveName(call, fd, "to", moving); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 2}[tt.doneFirst]; *tries != want {
				t.Errorf("%d tries, want %d", *tries, want)
			}
			for name, data := range tt.want {
				if got := read(t, filepath.Join(dir, name)); got != data {
					t.Errorf("%s holds %q, want %q", name, got, data)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "from")); len(tt.want) == 1 && !os.IsNotExist(err) {
				t.Errorf("from is still there (%v)", err)
			}
		})
	}
}

// A link cut short after which the name holds another file is repeated, and fails as the
// name is taken: the file at the name is not this call's.
func TestMoveNameRepeatsWhenTheNameHoldsAnotherFile(t *testing.T) {
	dir, fd := folder(t)
	write(t, filepath.Join(dir, "file"), "mine")
	linking := fileID(t, filepath.Join(dir, "file"))
	call, tries := cutShort(2, false, func() error { return unix.Linkat(fd, "file", fd, "name", 0) })
	first := call
	call = func() error {
		if *tries == 1 { // between the two cuts, someone puts a file at the name
			write(t, filepath.Join(dir, "name"), "theirs")
		}
		return first()
	}
	err := moveName(call, fd, "name", linking)
	if !errors.Is(err, unix.EEXIST) || *tries != 3 {
		t.Fatalf("got %v after %d tries, want EEXIST after 3", err, *tries)
	}
	if got := read(t, filepath.Join(dir, "name")); got != "theirs" {
		t.Errorf("name holds %q", got)
	}
}

// A name made by a try cut short is found taken by the repeat: the error says the first
// try may have made it, and is still EEXIST for a caller that does not ask.
func TestMakeNameSaysACutTryMayHaveMadeIt(t *testing.T) {
	dir, fd := folder(t)
	call, tries := cutShort(1, true, func() error { return unix.Mkdirat(fd, "d", 0o700) })
	_, err := makeName(func() (int, error) { return 0, call() })
	if !errors.Is(err, ErrCut) || !errors.Is(err, unix.EEXIST) || *tries != 2 {
		t.Fatalf("got %v after %d tries, want ErrCut and EEXIST after 2", err, *tries)
	}
	if fi, err := os.Stat(filepath.Join(dir, "d")); err != nil || !fi.IsDir() {
		t.Fatalf("the folder: %v", err)
	}

	// Not cut short: a name taken is only EEXIST.
	_, err = makeName(func() (int, error) { return 0, unix.Mkdirat(fd, "d", 0o700) })
	if !errors.Is(err, unix.EEXIST) || errors.Is(err, ErrCut) {
		t.Errorf("got %v, want EEXIST without ErrCut", err)
	}
	// Cut short but not done: the repeat makes it, and that is all.
	call, tries = cutShort(3, false, func() error { return unix.Mkdirat(fd, "e", 0o700) })
	if _, err := makeName(func() (int, error) { return 0, call() }); err != nil || *tries != 4 {
		t.Errorf("got %v after %d tries, want success after 4", err, *tries)
	}
}

// A removal cut short after which the name is gone succeeded; one that finds the name gone
// on its first try did not.
func TestRemoveNameTakesAGoneNameAfterACutForDone(t *testing.T) {
	dir, fd := folder(t)
	write(t, filepath.Join(dir, "f"), "x")
	call, tries := cutShort(1, true, func() error { return unix.Unlinkat(fd, "f", 0) })
	if err := removeName(call); err != nil || *tries != 2 {
		t.Fatalf("got %v after %d tries, want success after 2", err, *tries)
	}
	if err := removeName(func() error { return unix.Unlinkat(fd, "f", 0) }); !errors.Is(err, unix.ENOENT) {
		t.Errorf("a removal of nothing: %v, want ENOENT", err)
	}
}

// Rename takes the identity of what oldpath holds before it starts; a missing oldpath is
// its error.
func TestRenameOfPaths(t *testing.T) {
	dir, _ := folder(t)
	from, to := filepath.Join(dir, "from"), filepath.Join(dir, "to")
	if err := Rename(from, to, unix.RENAME_NOREPLACE); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("renaming nothing: %v, want ENOENT", err)
	}
	write(t, from, "new")
	if err := Rename(from, to, unix.RENAME_NOREPLACE); err != nil || read(t, to) != "new" {
		t.Fatalf("rename: %v", err)
	}
}
