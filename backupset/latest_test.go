package backupset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
)

var (
	t0    = time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	nameA = stamp("app", t0)
	nameB = stamp("app", t0.Add(time.Hour))
)

// twoRuns lays out a set with two complete runs, A and B, and LATEST naming A: a reader that
// falls back to "the newest file" would pick B.
func twoRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeRun(t, dir, fakeRun{nameA, format.Complete, t0})
	writeRun(t, dir, fakeRun{nameB, format.Complete, t0.Add(time.Hour)})
	writeFile(t, filepath.Join(dir, LatestName), nameA+"\n")
	return dir
}

// corruptions are the damaged pointers and targets every reader must refuse.
var corruptions = []struct {
	name   string
	damage func(t *testing.T, dir string)
	want   string
}{
	{"symlink", func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, "elsewhere"), nameA+"\n")
		replace(t, dir, LatestName, func(p string) error { return os.Symlink("elsewhere", p) })
	}, "is a symlink"},
	{"directory", func(t *testing.T, dir string) {
		replace(t, dir, LatestName, func(p string) error { return os.Mkdir(p, 0o755) })
	}, "is a directory"},
	{"fifo", func(t *testing.T, dir string) {
		replace(t, dir, LatestName, func(p string) error { return syscall.Mkfifo(p, 0o644) })
	}, "not a regular file"},
	{"two lines", pointer(nameA + "\n" + nameB + "\n"), "has more than one line"},
	{"blank second line", pointer(nameA + "\n\n"), "has more than one line"},
	{"trailing space", pointer(nameA + " \n"), "trailing junk"},
	{"CRLF", pointer(nameA + "\r\n"), "trailing junk"},
	{"empty", pointer(""), "is empty"},
	{"slash", pointer("sub/" + nameA + "\n"), "holds a /"},
	{"absolute", pointer(filepath.Join("/tmp", nameA) + "\n"), "holds a /"},
	{"dotdot", pointer("app..-20260301T030000Z.zip\n"), "holds .."},
	{"NUL", pointer(nameA + "\x00\n"), "NUL"},
	{"not an archive name", pointer("important.zip\n"), "not an archive name"},
	{"too long", pointer(strings.Repeat("a", 5000)), "larger than"},
	{"missing target", pointer(stamp("app", t0.Add(-time.Hour)) + "\n"), "the archive is missing"},
	{"target is a symlink", func(t *testing.T, dir string) {
		replace(t, dir, nameA, func(p string) error { return os.Symlink(nameB, p) })
	}, "the archive is a symlink"},
	{"receipt missing", func(t *testing.T, dir string) {
		os.Remove(filepath.Join(dir, nameA+format.ReceiptSuffix))
	}, "its receipt is missing"},
	{"receipt garbage", func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, nameA+format.ReceiptSuffix), "{not json")
	}, "its receipt cannot be read"},
	{"receipt of another archive", func(t *testing.T, dir string) {
		data, _ := os.ReadFile(filepath.Join(dir, nameB+format.ReceiptSuffix))
		writeFile(t, filepath.Join(dir, nameA+format.ReceiptSuffix), string(data))
	}, "describes another archive, " + nameB},
	{"archive changed size", func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, nameA), "a longer archive than the receipt says")
	}, "its receipt says 32 bytes, the archive has 38"},
	{"receipt is a symlink", func(t *testing.T, dir string) {
		replace(t, dir, nameA+format.ReceiptSuffix, func(p string) error { return os.Symlink(nameB+format.ReceiptSuffix, p) })
	}, "is a symlink"},
	{"receipt of a failed run", func(t *testing.T, dir string) {
		writeRun(t, dir, fakeRun{nameA, format.Failed, t0})
	}, "its receipt says no archive was written"},
	{"missing with archives", func(t *testing.T, dir string) {
		os.Remove(filepath.Join(dir, LatestName))
	}, "is missing, but the set holds"},
}

func pointer(content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, LatestName), content) }
}

func replace(t *testing.T, dir, name string, make func(path string) error) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := make(path); err != nil {
		t.Fatal(err)
	}
}

func TestLatestFailsClosed(t *testing.T) {
	for _, tt := range corruptions {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			tt.damage(t, dir)
			e, err := Latest(t.Context(), Folder{dir})
			if err == nil {
				t.Fatalf("Latest resolved to %s", e.Name)
			}
			var le *LatestError
			if !errors.As(err, &le) || le.Path != filepath.Join(dir, LatestName) {
				t.Errorf("error %#v does not name %s", err, LatestName)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
}

func TestLatestGood(t *testing.T) {
	for _, content := range []string{nameA + "\n", nameA} {
		dir := twoRuns(t)
		writeFile(t, filepath.Join(dir, LatestName), content)
		e, err := Latest(t.Context(), Folder{dir})
		if err != nil || e.Name != nameA || e.State() != Complete {
			t.Errorf("LATEST %q: %s (%s), %v; want %s", content, e.Name, e.State(), err, nameA)
		}
	}
}

func TestLatestNoBackup(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if _, err := Latest(t.Context(), Folder{dir}); !errors.Is(err, ErrNoBackup) {
			t.Errorf("Latest(%s) = %v, want ErrNoBackup", dir, err)
		}
	}
}
