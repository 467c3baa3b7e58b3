package sqlitesnap

import (
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// SQLite's locks are fcntl locks, which belong to the process, and closing any descriptor
// of a file drops every one the process holds on that file: SQLite's shared lock, which
// keeps a rollback-journal database's writer out for the whole copy, too. Another part of
// this process that opens the database while it is copied (the walk, reading its first bytes
// to tell whether a -journal beside it is a sidecar) and closes it would let the writer
// commit in the middle of the copy: a snapshot with some tables before that commit and some
// after it, which quick_check passes. So a database is marked as read by SQLite for as long
// as a snapshot of it is taken, and Close keeps any other descriptor of it open until then.

// fileKey identifies a file by its device and inode.
type fileKey struct{ dev, ino uint64 }

// reading holds the files SQLite reads in this process, with the descriptors whose closing
// waits for it. Its mutex is held across a close, so that no copy begins between the check
// and the close.
var reading = struct {
	sync.Mutex
	files map[fileKey]*readers
}{files: map[fileKey]*readers{}}

type readers struct {
	n     int         // snapshots of the file being taken
	later []io.Closer // closes that wait for them
}

// statCloser is an open file: an *os.File or a *walker.File.
type statCloser interface {
	Stat() (fs.FileInfo, error)
	io.Closer
}

func keyOf(f statCloser) (fileKey, bool) {
	info, err := f.Stat()
	if err != nil {
		return fileKey{}, false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{uint64(st.Dev), st.Ino}, true
}

// startReading marks the file f as read by SQLite until done is called, which makes the
// closes that waited meanwhile.
func startReading(f *os.File) (done func()) {
	k, ok := keyOf(f)
	if !ok {
		return func() {}
	}
	reading.Lock()
	r := reading.files[k]
	if r == nil {
		r = &readers{}
		reading.files[k] = r
	}
	r.n++
	reading.Unlock()
	return func() {
		reading.Lock()
		r.n--
		var later []io.Closer
		if r.n == 0 {
			later = r.later
			delete(reading.files, k)
		}
		reading.Unlock()
		for _, c := range later {
			c.Close()
		}
	}
}

// Close closes f, a file this process opened outside SQLite, at once, or, when a snapshot
// of the same file is being taken in this process, once it is taken: closed meanwhile, it
// would drop SQLite's locks on the database.
func Close(f statCloser) error {
	k, ok := keyOf(f)
	reading.Lock()
	defer reading.Unlock()
	if r := reading.files[k]; ok && r != nil {
		r.later = append(r.later, f)
		return nil
	}
	return f.Close()
}
