package sqlitesnap

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite opens a database's sidecars by name and, where it can, writes them: as root it may
// open any -shm read-write, and with no other connection there it truncates the -shm and
// writes its WAL index into it; it also gives each -journal, -wal and -shm it opens to the
// database's owner (robustFchown in os_unix.c), even one it opens read-only, only to see
// whether a journal is hot. A sidecar that the tree's writer made a hard link to someone
// else's file (one he may write, which the kernel lets him link) would have that file
// overwritten, or handed to the database's owner, him; and every chown, even to the owner
// a file has, moves its change time. So, for this process, two of the unix VFS's system
// calls are replaced: fchown does nothing, and open refuses to open for writing a file that
// has other links (SQLite then opens a -shm read-only, and reads the -wal itself). Staged
// copies are this process's own files, with one link, and need no other owner.

// noFchown is what SQLite calls instead of fchown: it changes nothing.
func noFchown(*libc.TLS, int32, uint32, uint32) int32 { return 0 }

// sqliteOpen is the VFS's own open, which guardedOpen calls.
var sqliteOpen uintptr

// guardedOpen is what SQLite calls instead of open: the VFS's open, and for a file opened
// for writing, a check on the descriptor that it is a regular file with one link, or it is
// closed again and the open fails with EPERM.
func guardedOpen(tls *libc.TLS, name uintptr, flags, mode int32) int32 {
	fd := (*(*func(*libc.TLS, uintptr, int32, int32) int32)(unsafe.Pointer(&struct{ uintptr }{sqliteOpen})))(tls, name, flags, mode)
	if fd < 0 || flags&unix.O_ACCMODE == unix.O_RDONLY {
		return fd
	}
	var st unix.Stat_t
	if unix.Fstat(int(fd), &st) == nil && (st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink == 1) {
		return fd
	}
	libc.Xclose(tls, fd)
	errno := libc.X__errno_location(tls) // in libc's memory, as vfs in guardVFS
	*(*int32)(*(*unsafe.Pointer)(unsafe.Pointer(&errno))) = int32(unix.EPERM)
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
