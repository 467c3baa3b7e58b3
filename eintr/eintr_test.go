package eintr

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// A file a create cut short made is found by the repeat: it is removed and made again, so
// that the caller holds the file it made; a file someone else put at the name is theirs.
func TestCreateCutShortMakesTheFileAgain(t *testing.T) {
	dir, fd := folder(t)
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC
	tries := 0
	create := func() (int, error) { // the first try makes the file, and is cut short after
		tries++
		n, err := unix.Openat(fd, "f", flags, 0o600)
		if tries == 1 && err == nil {
			unix.Close(n)
			return -1, unix.EINTR
		}
		return n, err
	}
	n, err := makeName(create, func() bool { return removeEmptyFile(fd, "f") })
	if err != nil || tries != 3 {
		t.Fatalf("got %v after %d tries, want success after 3", err, tries)
	}
	var held, named unix.Stat_t
	if unix.Fstat(n, &held) != nil || unix.Stat(filepath.Join(dir, "f"), &named) != nil || IDOf(&held) != IDOf(&named) {
		t.Fatal("the name does not hold the file made last")
	}
	unix.Close(n)

	for what, theirs := range map[string]func(path string){
		"a file with data": func(path string) { write(t, path, "theirs") },
		"a folder":         func(path string) { os.Mkdir(path, 0o700) },
		"a file of nobody's": func(path string) {
			write(t, path, "")
			os.Chown(path, 65534, 65534)
		},
	} {
		if what == "a file of nobody's" && os.Geteuid() != 0 {
			continue // chown needs root, which CI is
		}
		name := strings.ReplaceAll(what, " ", "-")
		theirs(filepath.Join(dir, name))
		call, tries := cutShort(1, false, func() error { _, err := unix.Openat(fd, name, flags, 0o600); return err })
		_, err := makeName(func() (int, error) { return 0, call() }, func() bool { return removeEmptyFile(fd, name) })
		if !errors.Is(err, unix.EEXIST) || *tries != 2 {
			t.Errorf("%s at the name: got %v after %d tries, want EEXIST after 2", what, err, *tries)
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s at the name was removed", what)
		}
	}
}

// A folder a mkdir cut short made is found empty and this user's by the repeat: made.
func TestMkdirCutShortThatMadeItMadeIt(t *testing.T) {
	dir, fd := folder(t)
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if !emptyFolder(fd, "d") {
		t.Error("an empty folder of this user's is not taken as made")
	}
	write(t, filepath.Join(dir, "d/x"), "")
	if emptyFolder(fd, "d") {
		t.Error("a folder with a file in it is taken as made")
	}
	if err := os.Symlink(".", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if emptyFolder(fd, "l") {
		t.Error("a symlink to a folder is taken as made")
	}
}

// A symlink a symlinkat cut short made is removed and made again when it is this user's
// with the target asked; another one is someone's.
func TestSymlinkCutShortThatMadeIt(t *testing.T) {
	dir, fd := folder(t)
	if err := os.Symlink("target", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if removeSymlink(fd, "l", "other") || removeSymlink(fd, "l", "targe") {
		t.Error("a symlink to another target was removed")
	}
	if !removeSymlink(fd, "l", "target") {
		t.Error("the symlink made was not removed")
	}
	if _, err := os.Lstat(filepath.Join(dir, "l")); !os.IsNotExist(err) {
		t.Errorf("the symlink is still there (%v)", err)
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

// CreateTemp makes a new file for each call, at a name of its pattern.
func TestCreateTemp(t *testing.T) {
	dir, _ := folder(t)
	a, err := CreateTemp(dir, ".x-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := CreateTemp(dir, ".x-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, f := range []*os.File{a, b} {
		if base := filepath.Base(f.Name()); filepath.Dir(f.Name()) != dir || !strings.HasPrefix(base, ".x-") || !strings.HasSuffix(base, ".tmp") {
			t.Errorf("temp file %s, want .x-*.tmp in %s", f.Name(), dir)
		}
	}
	if a.Name() == b.Name() {
		t.Error("two temp files at one name")
	}
	if err := Remove(a.Name()); err != nil {
		t.Fatal(err)
	}
	// lnk/.. is the folder above lnk's target, which filepath.Join would clean away.
	if err := os.MkdirAll(filepath.Join(dir, "real/sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/sub", filepath.Join(dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	c, err := CreateTemp(filepath.Join(dir, "lnk")+"/..", "c-*")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got, _ := filepath.Glob(filepath.Join(dir, "real/c-*")); len(got) != 1 {
		t.Errorf("the temp file is at %s, want it in real/", c.Name())
	}
	if err := Remove(a.Name()); !errors.Is(err, unix.ENOENT) || !strings.Contains(err.Error(), a.Name()) {
		t.Errorf("removing nothing: %v, want ENOENT naming the path", err)
	}
}

// A server that makes the name and reports the call cut short every time is given up on
// after maxRemakes: the name is then taken (EEXIST), as for any other.
func TestMakeNameGivesUpOnAServerThatAlwaysCuts(t *testing.T) {
	_, fd := folder(t)
	tries := 0
	alwaysCut := func() (int, error) {
		tries++
		if err := unix.Mkdirat(fd, "d", 0o700); err != nil {
			return 0, err
		}
		return 0, unix.EINTR
	}
	_, err := makeName(alwaysCut, func() bool { return unix.Unlinkat(fd, "d", unix.AT_REMOVEDIR) == nil })
	if !errors.Is(err, unix.EEXIST) || tries != 2*(maxRemakes+1) {
		t.Errorf("got %v after %d tries, want EEXIST after %d", err, tries, 2*(maxRemakes+1))
	}
}

// MkdirTemp makes a new folder, owner-only, at a name of its pattern; a pattern with a
// slash is refused, as by os.MkdirTemp.
func TestMkdirTemp(t *testing.T) {
	dir, _ := folder(t)
	name, err := MkdirTemp(dir, "hook-")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(name); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || filepath.Dir(name) != dir || !strings.HasPrefix(filepath.Base(name), "hook-") {
		t.Errorf("made %s (%v, %v), want an owner-only folder hook-* in %s", name, fi.Mode(), err, dir)
	}
	if _, err := MkdirTemp(dir, "a/b*"); err == nil {
		t.Error("a pattern with a slash was taken")
	}
}
