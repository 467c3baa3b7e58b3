package walker

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackSweepSymlinkStatEIOSaysLoop: the walk lstats app/link, a symlink, and the lstat
// fails (EIO; found by the fault sweep as the 23rd fstatat of a set run with --symlinks
// store). The walker then opens the name without following links to fstat it, which a
// symlink refuses (ELOOP), and that open's error was the entry's: the run was incomplete
// with "lost app/link: open: too many levels of symbolic links", a loop that is not there,
// the I/O error nowhere.
// Correct: an open refused because the name is a symlink says nothing of a loop; the
// path is lost (op "open": not in the archive) by the lstat's error ("open: lstat failed:
// input/output error").
func TestAttackSweepSymlinkStatEIOSaysLoop(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("target", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	w := Walker{lstat: func(int, string) (fs.FileInfo, error) { return nil, syscall.EIO }}
	info, err := w.stat(testDir(t, root), "link", "r/link")
	var pe *fs.PathError
	if info != nil || !errors.As(err, &pe) || pe.Op != OpOpen || !errors.Is(err, syscall.EIO) || strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("lstat of a symlink failed (EIO): got %v, %v; want no info and the lstat's error", info, err)
	}
}
