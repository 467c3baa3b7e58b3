package archive

import (
	"archive/zip"
	"io/fs"
)

// Only Unix hosts (and macOS, which stores the same) keep a Unix mode in an entry: DOS and
// Windows tools keep attributes that Go's reader turns into 0666 files and 0777 folders
// (world-writable), other hosts and the JDK's jar keep nothing, and some Unix tools store
// nothing where the mode goes (no file type either). Such entries are restored as unzip restores them, with a safer default: 0644
// for files (0444 when DOS marks them read-only) and 0755 for folders, less the umask. unzip
// starts from 0666 and 0777 before the umask; group and others get no write permission here
// whatever the umask, since the archive never asked for it.
const (
	dosReadOnly  = 0x01
	defaultFile  = 0o644
	defaultDir   = 0o755
	ownerSearch  = 0o100
	readOnlyFile = 0o444
)

// restoreMode returns the mode to restore the file or directory entry f with, given mode, the
// one Go's reader gives it, and whether it is a default rather than the archive's. A
// directory always gets its owner's search bit: without it, what it holds could not be
// reached, even by the owner, and the restore would still have said complete.
func restoreMode(f *zip.FileHeader, mode fs.FileMode) (fs.FileMode, bool) {
	unixHost := Host(f.CreatorVersion >> 8).unixLike()
	// A file of mode 0000 is stored with its type bits (S_IFREG), as zip and tar keep it:
	// only an empty field means no mode. Taking 0000 for none would restore it 0644.
	unixMode := unixHost && (mode.Perm() != 0 || f.ExternalAttrs>>16 != 0)
	switch {
	case unixMode && mode.IsDir():
		return mode | ownerSearch, false
	case unixMode:
		return mode, false
	case mode.IsDir():
		return fs.ModeDir | defaultDir, true
	case !unixHost && f.ExternalAttrs&dosReadOnly != 0:
		return readOnlyFile, true
	}
	return defaultFile, true
}

// Perm is the permission bits to restore e with under umask: its own, or for an entry that
// holds no Unix mode the default (see Mode) less umask. A directory keeps its owner's search
// bit whatever the umask.
func (e *Entry) Perm(umask fs.FileMode) fs.FileMode {
	perm := e.Mode.Perm()
	if e.noUnixMode {
		perm &^= umask
	}
	if e.IsDir {
		perm |= ownerSearch
	}
	return perm
}
