package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"backup/format"
	"backup/walker"
)

// linkOnRead is a source file whose first Read gives the file another link and takes it
// away: its change time moves while its size, mtime, owner and mode stay, as a write with
// its mtime put back leaves them.
type linkOnRead struct {
	SourceFile
	path string
	done bool
}

func (f *linkOnRead) Read(p []byte) (int, error) {
	if !f.done {
		f.done = true
		if err := os.Link(f.path, f.path+".link"); err != nil {
			return 0, err
		}
		if err := os.Remove(f.path + ".link"); err != nil {
			return 0, err
		}
	}
	return f.SourceFile.Read(p)
}

// identityRun archives dir's files small (3 bytes) and large (3 MiB), as held by a walk, with
// opts, each opened through wrap, and returns the warnings and how often each was opened.
func identityRun(t *testing.T, dir string, held map[string]heldFile, opts Options, wrap func(f SourceFile, path string) SourceFile) ([]error, map[string]int) {
	t.Helper()
	var mu sync.Mutex
	opens := map[string]int{}
	var warns []error
	opts.Open = func(src walker.Handle, name string) (SourceFile, error) {
		f, err := openSource(src, name)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		opens[name]++
		mu.Unlock()
		return wrap(f, filepath.Join(dir, name)), nil
	}
	opts.OnWarn = func(err error) { warns = append(warns, err) }
	out := t.TempDir()
	w, err := Create(context.Background(), out, "out.zip", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"large", "small"} {
		if err := w.AddFile(held[name].src, name, held[name].info, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(filepath.Join(out, "out.zip"), false); err != nil {
		t.Fatal(err)
	}
	return warns, opens
}

func identityTree(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"small": []byte("abc"), "large": bytes.Repeat([]byte("0123456789abcdef"), 3<<16)})
	return dir
}

// TestChangeTimeMovedWhileRead: a file whose change time alone moved while it was read is
// read again and, when it keeps changing, kept with a changed warning that says so, as GNU
// tar's "file changed as we read it"; with --ignore-ctime or --ignore-inode (file systems
// where change times move on their own) it is read once, without one.
func TestChangeTimeMovedWhileRead(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		reads int
	}{
		{Options{}, maxReads},
		{Options{IgnoreCtime: true}, 1},
		{Options{IgnoreInode: true}, 1},
	} {
		t.Run(fmt.Sprintf("ctime=%v,inode=%v", !tc.opts.IgnoreCtime, !tc.opts.IgnoreInode), func(t *testing.T) {
			dir := identityTree(t)
			tc.opts.Jobs = 2
			tc.opts.Level = DefaultLevel
			warns, opens := identityRun(t, dir, heldFiles(t, dir), tc.opts, func(f SourceFile, path string) SourceFile {
				return &linkOnRead{SourceFile: f, path: path}
			})
			for _, name := range []string{"small", "large"} {
				if opens[name] != tc.reads {
					t.Errorf("%s opened %d times, want %d", name, opens[name], tc.reads)
				}
			}
			changed := 0
			for _, err := range warns {
				if errors.Is(err, ErrChanged) && strings.Contains(err.Error(), "its change time moved") {
					changed++
				}
			}
			if want := map[bool]int{true: 2, false: 0}[tc.reads > 1]; changed != want || len(warns) != want {
				t.Errorf("warnings %v, want %d changed", warns, want)
			}
		})
	}
}

// TestReplacedSinceWalkIgnoreInode: a file renamed over after the walk (another inode, the
// same owner) is found replaced, unless --ignore-inode says inode numbers move on their own
// there; a file given another owner is found replaced either way.
func TestReplacedSinceWalkIgnoreInode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprint(ignore), func(t *testing.T) {
			dir := identityTree(t)
			held := heldFiles(t, dir)
			// Renamed over: small gets a new inode, large another owner.
			tmp := filepath.Join(dir, "small.new")
			os.WriteFile(tmp, []byte("abc"), 0o644)
			if err := os.Rename(tmp, filepath.Join(dir, "small")); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(filepath.Join(dir, "large"), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			opts := Options{Jobs: 2, Level: DefaultLevel, IgnoreInode: ignore}
			warns, _ := identityRun(t, dir, held, opts, func(f SourceFile, _ string) SourceFile { return f })
			replaced := map[string]bool{}
			for _, err := range warns {
				var pe *fs.PathError
				if errors.As(err, &pe) && pe.Op == format.OpChanged {
					replaced[pe.Path] = true
				}
			}
			if !replaced["large"] || replaced["small"] == ignore || len(warns) != len(replaced) {
				t.Errorf("found replaced %v, want large, and small unless inodes are ignored (warnings %v)", replaced, warns)
			}
		})
	}
}
