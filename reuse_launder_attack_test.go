package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackIgnoredCtimeLaunderedForLaterRuns: --ignore-ctime (and --ignore-inode, which
// leaves out the change time too) takes a file whose size, mtime, inode and mode are as the
// reference recorded as unchanged, whatever its change time: a file rewritten in place
// with the same size and its mtime put back is copied stale, the risk the flag takes
// (after a chown -R, say, which moves every change time). But the run recorded in its
// manifest the change time the file has now, as if it had checked the copied bytes
// against it, and every run after it, without the flag, compared the file with that: it
// copied the stale bytes again, said complete, and kept doing so until the file's metadata
// moved. The new content was in no backup of a run that never asked to leave anything out.
// Correct: an entry copied without comparing the change time (or the inode) keeps the
// change time (and inode) its reference recorded, so that a run that compares them reads
// the file again.
func TestAttackIgnoredCtimeLaunderedForLaterRuns(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--ignore-ctime", "--ignore-inode"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, dir, map[string]node{"app/f": {content: "version A\n"}, "app/g": {content: "other\n"}})
			f := filepath.Join(dir, "app", "f")
			set := filepath.Join(dir, "set")
			r, _ := setRun(t, dir, set, "-q")
			mustExit(t, r, exitComplete)
			info, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("version B\n"), 0o644); err != nil { // in place, the same size
				t.Fatal(err)
			}
			if err := os.Chtimes(f, info.ModTime(), info.ModTime()); err != nil { // its mtime put back
				t.Fatal(err)
			}
			r, ignoring := setRun(t, dir, set, "-q", flag)
			mustExit(t, r, exitComplete)
			if got := readZipGo(t, ignoring)["app/f"]; got != "version A\n" {
				t.Skipf("the run with %s read the file (stored %q): nothing to carry on", flag, got)
			}
			r, after := setRun(t, dir, set)
			mustExit(t, r, exitComplete)
			if got := readZipGo(t, after)["app/f"]; got != "version B\n" {
				t.Errorf("the run after, without %s, stored app/f as %q; the file holds %q (%d reused):\n%s",
					flag, got, "version B\n", reusedIn(t, after), r.stderr)
			}
		})
	}
}
