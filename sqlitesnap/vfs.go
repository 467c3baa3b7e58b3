package sqlitesnap

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"backup/eintr"
)

// SQLite opens a database's sidecars by name and, where it can, writes them: even on a
// read-only connection it opens the -shm read-write (root always may) and writes its read
// marks there, or, with no other connection, truncates it and writes a whole new WAL index;
// a folder swapped for a symlink meanwhile leads it to do so in any folder, creating the
// file if need be. As root it also gives each -journal, -wal and -shm it opens to the
// database's owner (robustFchown in os_unix.c), even one it opens read-only only to see
// whether a journal is hot. A sidecar that the tree's writer made a hard link to someone
// else's file (one he may write, which the kernel lets him link) would have that file
// overwritten, or handed to him; and any of it moves files' mtimes or change times in a
// tree that a backup must only read. So, for this process, two of the unix VFS's system
// calls are replaced: fchown does nothing, and open opens for writing only this process's
// staged copies (and, with O_EXCL, SQLite's new temp files): any other file it refuses with
// EACCES, and SQLite opens it read-only instead (a -shm too: it then reads the -wal itself,
// which readonly_shm in SQLite's documentation describes).

// staged holds the base names of the staged copies being made (see Take): the files SQLite
// may open for writing, with their -journal, -wal and -shm.
var staged sync.Map

// noFchown is what SQLite calls instead of fchown: it changes nothing.
func noFchown(*libc.TLS, int32, uint32, uint32) int32 { return 0 }

// sqliteOpen is the VFS's own open, which guardedOpen calls.
var sqliteOpen uintptr

// guardedOpen is what SQLite calls instead of open. It opens without blocking and keeps
// only a regular file, a folder (SQLite opens one to sync it) or /dev/urandom: SQLite opens a database and
// its sidecars by name, blocking, and a FIFO swapped in at one of those names after the
// checks would block it for ever, past --sqlite-timeout and Ctrl-C. A file opened for
// writing must be a staged copy or one of its sidecars, or a new file (O_EXCL: SQLite's temp
// files), and, checked on the descriptor, a regular file with one link. Otherwise the open
// fails with EACCES (and a descriptor already opened is closed).
func guardedOpen(tls *libc.TLS, name uintptr, flags, mode int32) int32 {
	writes := flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_CREAT != 0
	if writes && flags&unix.O_EXCL == 0 && !isStaged(libc.GoString(name)) {
		return failOpen(tls)
	}
	fd := (*(*func(*libc.TLS, uintptr, int32, int32) int32)(unsafe.Pointer(&struct{ uintptr }{sqliteOpen})))(tls, name, flags|unix.O_NONBLOCK, mode)
	if fd < 0 {
		return fd
	}
	var st unix.Stat_t
	ok := eintr.Fstat(int(fd), &st) == nil
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		ok = ok && (!writes || st.Nlink == 1)
	case unix.S_IFDIR:
		ok = ok && !writes
	case unix.S_IFCHR: // the seed of SQLite's randomness, and no other device
		ok = ok && !writes && libc.GoString(name) == "/dev/urandom"
	default:
		ok = false
	}
	if ok && flags&unix.O_NONBLOCK == 0 {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, int(flags&^unix.O_NONBLOCK))
		ok = err == nil
	}
	if ok {
		return fd
	}
	libc.Xclose(tls, fd)
	return failOpen(tls)
}

// isStaged reports whether path names a staged copy being made, or a sidecar of one.
func isStaged(path string) bool {
	base := filepath.Base(path)
	for _, s := range sidecarSuffixes {
		if db, ok := strings.CutSuffix(base, s); ok {
			base = db
			break
		}
	}
	_, ok := staged.Load(base)
	return ok
}

// failOpen fails an open with EACCES, on which SQLite opens a file read-only instead.
func failOpen(tls *libc.TLS) int32 {
	errno := libc.X__errno_location(tls) // in libc's memory, as vfs in guardVFS
	*(*int32)(*(*unsafe.Pointer)(unsafe.Pointer(&errno))) = int32(unix.EACCES)
	return -1
}

// The functions as values: the word of each is what modernc's SQLite takes for a C function
// pointer (it calls one through a struct{ uintptr } seen as a func).
var (
	noFchownFunc    = noFchown
	guardedOpenFunc = guardedOpen
)

// guardVFS puts noFchown and guardedOpen in the unix VFS, once for the process; an error
// means it could not, and no snapshot is taken.
var guardVFS = sync.OnceValue(func() error {
	tls := libc.NewTLS()
	defer tls.Close()
	vfs := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if vfs == 0 {
		return errors.New("SQLite has no default VFS")
	}
	// vfs is the address of memory modernc's libc allocated, outside Go's heap: seen as a
	// pointer through its variable, since a conversion from uintptr is what vet refuses.
	v := (*sqlite3.Tsqlite3_vfs)(*(*unsafe.Pointer)(unsafe.Pointer(&vfs)))
	if v.FxSetSystemCall == 0 || v.FxGetSystemCall == 0 {
		return errors.New("SQLite's VFS cannot replace its system calls")
	}
	set := *(*func(*libc.TLS, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{v.FxSetSystemCall}))
	get := *(*func(*libc.TLS, uintptr, uintptr) uintptr)(unsafe.Pointer(&struct{ uintptr }{v.FxGetSystemCall}))
	for _, call := range []struct {
		name string
		fn   uintptr
	}{
		{"fchown", *(*uintptr)(unsafe.Pointer(&noFchownFunc))},
		{"open", *(*uintptr)(unsafe.Pointer(&guardedOpenFunc))},
	} {
		name, err := libc.CString(call.name)
		if err != nil {
			return err
		}
		if call.name == "open" {
			sqliteOpen = get(tls, vfs, name)
		}
		rc := set(tls, vfs, name, call.fn)
		libc.Xfree(tls, name)
		if rc != sqlite3.SQLITE_OK || call.name == "open" && sqliteOpen == 0 {
			return fmt.Errorf("keeping SQLite from writing sidecars: replacing its %s: error %d", call.name, rc)
		}
	}
	return nil
})
