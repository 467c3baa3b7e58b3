package archive

import (
	"path"
	"path/filepath"
	"strings"
	"testing"

	"backup/skiprules"
)

// Seeds are in testdata/fuzz/<target>. FuzzReader, which restores what it opens, is
// restore's.

// FuzzCheckName checks that every name CheckName accepts stays below any folder it is
// joined to, on Unix and, for a host other than Unix, read as a Windows path too; and that
// what it accepts for any host it accepts for Unix.
func FuzzCheckName(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, host uint8) {
		h := Host(host)
		if CheckName(name, h) != nil {
			return
		}
		const dest = "/dest"
		joined := filepath.Join(dest, name)
		switch {
		case !strings.HasPrefix(joined, dest+"/"):
			t.Fatalf("%q joins to %q, outside %s", name, joined, dest)
		case !filepath.IsLocal(name):
			t.Fatalf("%q accepted but not local", name)
		case path.Clean(name) != name:
			t.Fatalf("%q accepted but not clean: %q", name, path.Clean(name))
		case strings.IndexByte(name, 0) >= 0:
			t.Fatalf("%q accepted with a NUL", name)
		case CheckName(name, HostUnix) != nil:
			t.Fatalf("%q accepted for host %d but not for Unix", name, host)
		case h.unixLike():
		case strings.IndexByte(name, '\\') >= 0:
			t.Fatalf("%q accepted from host %d with a backslash", name, host)
		case len(name) >= 2 && name[1] == ':' && isLetter(name[0]):
			t.Fatalf("%q accepted from host %d with a drive letter", name, host)
		}
	})
}

// FuzzCheckNames checks the names of an archive together. Input: one entry a line; a
// trailing "/" makes a directory, a leading "@" a symlink. When CheckNames finds nothing,
// the names are safe and unique, and none lies below an entry that is not a directory.
func FuzzCheckNames(f *testing.F) {
	f.Fuzz(func(t *testing.T, list string) {
		var entries []*Entry
		for line := range strings.SplitSeq(list, "\n") {
			e := &Entry{Name: strings.TrimSuffix(line, "/"), IsDir: strings.HasSuffix(line, "/")}
			if n, ok := strings.CutPrefix(e.Name, "@"); ok && !e.IsDir {
				e.Name, e.Kind = n, skiprules.KindSymlink
			}
			entries = append(entries, e)
		}
		if len(CheckNames(entries)) > 0 {
			return
		}
		byName := map[string]*Entry{}
		for _, e := range entries {
			if CheckName(e.Name, e.Host) != nil || byName[e.Name] != nil {
				t.Fatalf("%q passed, unsafe or duplicate", e.Name)
			}
			byName[e.Name] = e
		}
		for _, e := range entries {
			for dir := parentOf(e.Name); dir != ""; dir = parentOf(dir) {
				if p := byName[dir]; p != nil && !p.IsDir {
					t.Fatalf("%q passed below %q, which is not a directory", e.Name, dir)
				}
			}
		}
	})
}

func parentOf(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}
