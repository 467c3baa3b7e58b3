package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FixedPath says why another user could move what the folder dir holds, or dir itself, and
// put something of theirs in its place: a folder on the way from dir up to the root that
// they own (sudo keeping HOME=/home/alice), or may write to without the sticky bit (which
// lets only an entry's owner move it, as in /tmp). A cache kept there, a copy staged there
// and opened again by name, or an archive read from there could be theirs by then. Both the
// path as given and as its symlinks resolve are checked; a symlink itself cannot be
// changed, only replaced through its folder.
func FixedPath(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	for _, p := range []string{abs, resolved} {
		for d := p; ; d = filepath.Dir(d) {
			if err := fixedFolder(d); err != nil {
				return err
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return nil
}

// fixedFolder says why another user could move what the folder d holds.
func fixedFolder(d string) error {
	info, err := os.Lstat(d)
	if err != nil || info.Mode()&fs.ModeSymlink != 0 {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case ok && st.Uid != 0 && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to another user (uid %d), who could put something of theirs in the place of what it holds", d, st.Uid)
	case info.Mode().Perm()&0o022 != 0 && info.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("%s may be written by others (mode %v) and is not sticky: they could put something of theirs in the place of what it holds", d, info.Mode().Perm())
	}
	return nil
}
