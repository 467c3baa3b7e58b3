package backupset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ListFolderTree lists every file below the folder root, at any depth, each named by its
// path below root with "/" between folders, as a bucket's listing names keys: what
// FindSets groups into sets. Symlinks are listed as files (NotRegular), never followed, so
// a walk cannot leave root or loop; root itself may be a symlink to a folder, as a user
// names it. A folder below root that cannot be read is one error in errs, and the walk goes
// on; err is for a root that cannot be read at all.
func ListFolderTree(root string) (files []Object, errs []error, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, err
	}
	if !info.IsDir() {
		return nil, nil, &fs.PathError{Op: "list", Path: root, Err: errors.New("not a folder")}
	}
	walkRoot := root + string(filepath.Separator) // the walk's Lstat follows a symlinked root
	err = filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == walkRoot {
				return err
			}
			if fsckFolder(p, err) {
				return nil
			}
			errs = append(errs, err)
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since the folder was read
		}
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		rel, err := filepath.Rel(walkRoot, p)
		if err != nil {
			return err
		}
		o := folderObject(info)
		o.Name = filepath.ToSlash(rel)
		files = append(files, o)
		return nil
	})
	return files, errs, err
}

// fsckFolder says whether the folder at p that could not be read for err is the lost+found
// of a file system's root, which mkfs makes root's and 0700: a monitor that is not root
// (node_exporter's textfile cron) met it in every fleet on a mount of its own, and a
// listing with a folder it cannot read is a failed one (exit 1, backup_sets_listed 0, which
// pages). It holds no set, only what fsck recovers, which root alone may read. Any other
// folder that cannot be read may hide sets, and is said.
func fsckFolder(p string, err error) bool {
	if filepath.Base(p) != "lost+found" || !errors.Is(err, fs.ErrPermission) {
		return false
	}
	parent := filepath.Dir(p)
	in, err1 := os.Stat(parent)
	up, err2 := os.Stat(filepath.Join(parent, ".."))
	if err1 != nil || err2 != nil {
		return false
	}
	st, ust := in.Sys().(*syscall.Stat_t), up.Sys().(*syscall.Stat_t)
	return st.Dev != ust.Dev || st.Ino == ust.Ino // a mount's root, or / itself
}
