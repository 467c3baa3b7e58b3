package backupset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
