package engine

import (
	"io/fs"
	"os"
	"path"
	"syscall"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
	"backup/walker"
)

// RuleRunTemp is the receipt's rule for a file another run is writing: an archive, receipt
// or cached copy under its temp name, which would be stored half-written (see
// atomicfile.CreateTemp).
const RuleRunTemp = "backup-temp"

// isRunTemp reports whether en is a temp file a run holds open to write. One that no run
// holds (a killed run's) is the user's to keep, and stored as any file. So is one that
// someone else could hold: flock needs only an open descriptor, and anyone who can read a
// file could keep it out of every backup. A run's own temp file is its user's, and readable
// by no one else (mode 0600) while it is written.
func isRunTemp(en walker.Entry) bool {
	if en.Rel == "" || !atomicfile.IsRunTempName(path.Base(en.Rel)) || !onlyOurs(en.Info) {
		return false
	}
	f, err := en.OpenSibling(path.Base(en.Rel))
	if err != nil {
		return false // stored, or warned about, as any file
	}
	defer f.Close()
	return atomicfile.HeldByRun(f) && heldByUser(f)
}

// heldByUser reports whether a process of this process's effective user holds the flock on
// f. Mode 0600 says who may open the file now, not who opened it: a descriptor taken while
// it was readable by all outlives a chmod, and would keep the file out of every backup.
// When no holder of this user is found (/proc unreadable, say) the file is stored.
func heldByUser(f *os.File) bool {
	var st unix.Stat_t
	if eintr.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	euid := uint32(os.Geteuid())
	for _, pid := range atomicfile.FlockHolders(&st) {
		if uid, ok := atomicfile.ProcEUID(pid); ok && uid == euid {
			return true
		}
	}
	return false
}

// onlyOurs reports whether info is a file of this process's user that no other user but
// root can open.
func onlyOurs(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && info.Mode().Perm()&0o077 == 0
}
