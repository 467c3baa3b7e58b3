package sqlitesnap

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite running as root gives each -journal and -wal it opens, and each -shm, to the
// database's owner (robustFchown in os_unix.c): an fchown of whatever file is at that name,
// done as it opens it, even read-only, only to see whether a journal is hot. A sidecar made
// a hard link to someone else's file (one the tree's writer may write, which the kernel
// lets him link) would hand that file to the database's owner, him; and every such chown,
// even to the owner it has, moves the sidecar's change time. A backup only reads, so
// SQLite's fchown does nothing in this process. Its own staged copies need no other owner.

// noFchown is what SQLite calls instead of fchown: it changes nothing.
func noFchown(*libc.TLS, int32, uint32, uint32) int32 { return 0 }

// noFchownFunc holds noFchown as a function value, whose word is what modernc's SQLite
// takes for a C function pointer (it calls one through a struct{ uintptr } seen as a func).
var noFchownFunc = noFchown

// disableChown replaces the unix VFS's fchown with noFchown, once for the process; an error
// means it could not, and no snapshot is taken.
var disableChown = sync.OnceValue(func() error {
	tls := libc.NewTLS()
	defer tls.Close()
	vfs := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if vfs == 0 {
		return errors.New("SQLite has no default VFS")
	}
	name, err := libc.CString("fchown")
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, name)
	// vfs is the address of memory modernc's libc allocated, outside Go's heap: seen as a
	// pointer through its variable, since a conversion from uintptr is what vet refuses.
	set := (*sqlite3.Tsqlite3_vfs)(*(*unsafe.Pointer)(unsafe.Pointer(&vfs))).FxSetSystemCall
	if set == 0 {
		return errors.New("SQLite's VFS cannot replace its system calls")
	}
	fn := *(*uintptr)(unsafe.Pointer(&noFchownFunc))
	call := *(*func(*libc.TLS, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{set}))
	if rc := call(tls, vfs, name, fn); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("keeping SQLite from changing sidecars' owners: error %d", rc)
	}
	return nil
})
