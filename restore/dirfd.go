package restore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"backup/eintr"
	"backup/format"
)

// destTree opens folders below the destination one component at a time, relative to the
// folder above, never following a symlink: whatever changes in the destination while a
// restore runs, nothing is written outside it. The folders of the last path opened stay
// open, for the next entry in the same folder; before each use each of them is checked to
// be still at its name (fstatat of the name in the folder above, against the identity the
// folder had when first opened), so that a folder moved out of the destination, or
// replaced, receives nothing more; the check is skipped while the moveGuard reports that
// no folder can have moved.
//
// Each of Run's workers has a destTree of its own (fork): its own chain, checked before
// each use as above, and the destShared of the restore.
type destTree struct {
	*destShared
	chain []openFolder // the folders of the path opened last, top first
	// checkedAt is the guard's count of mount changes when the chain was last checked, or
	// opened, whole.
	checkedAt uint64
}

// destShared is what the destTrees of one restore share; mu guards seen and created.
type destShared struct {
	root  int // the destination folder
	guard *moveGuard
	// unnamed is whether new files are written unnamed, and linkByProc whether they are
	// linked into place through /proc (see unnamed.go).
	unnamed, linkByProc atomic.Bool
	mu                  sync.Mutex
	// seen records the identity of every folder this restore opened, by name: a folder
	// found at that name later with another identity was replaced.
	seen map[string]fileID
	// mkdirMode gives the mode a missing folder is created with.
	mkdirMode func(name string) uint32
	// created records the folders this restore made.
	created map[string]bool
	// journal records the temp names this restore makes.
	journal *journal
	// replaceMu makes one replacement of --force at a time; replaced maps the identity a
	// file had before this restore took one of its names to the one it had after (see
	// checkedRename).
	replaceMu sync.Mutex
	replaced  map[nodeID]nodeID
}

// openFolder is one folder of destTree's chain: its name below the destination, its last
// component, its descriptor, and its identity when opened.
type openFolder struct {
	name, part string
	fd         int
	id         fileID
}

// errNotBeneath is the cause when a folder on the way is a symlink or not a folder.
var errNotBeneath = errors.New("is a symlink or not a directory")

// errMoved is the cause when a folder this restore opened is no longer at its name.
var errMoved = errors.New("was moved or replaced during the restore")

// openDestTree opens dest, or takes a descriptor of its own of the folder lock holds when it
// holds one: the folder locked, whatever dest's path leads to now.
func openDestTree(dest string, mkdirMode func(string) uint32, lock *DestLock) (*destTree, error) {
	fd, err := lock.dup()
	if err == nil && fd < 0 {
		fd, err = eintr.Open(dest, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", format.QuoteName(dest), err)
	}
	if err := notRemoved(fd); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", format.QuoteName(dest), err)
	}
	t := &destTree{destShared: &destShared{root: fd, guard: newMoveGuard(fd), mkdirMode: mkdirMode, created: map[string]bool{}, seen: map[string]fileID{}, replaced: map[nodeID]nodeID{}}}
	t.unnamed.Store(!t.guard.tripped.Load()) // procfs at /proc, as the guard found
	return t, nil
}

// errRemovedDest is the cause when the destination folder was removed before the restore
// opened it: a current folder deleted under a shell still opens as ".".
var errRemovedDest = errors.New("the folder was removed (nothing can be made in it)")

// notRemoved refuses a destination folder that was removed (no links left), where every
// entry would fail on its own, as if each had its own cause.
func notRemoved(fd int) error {
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Nlink == 0 {
		return errRemovedDest
	}
	return nil
}

func (t *destTree) close() {
	t.truncate(0)
	t.guard.close()
	unix.Close(t.root)
}

// fork returns a destTree of the same restore with a chain of its own, for another
// goroutine; release closes its folders (not the destination, which t.close closes).
func (t *destTree) fork() *destTree { return &destTree{destShared: t.destShared} }

func (t *destTree) release() { t.truncate(0) }

// wasSeen reports whether this restore opened a folder at path before.
func (s *destShared) wasSeen(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[path]
	return ok
}

// claim records id as the identity of the folder path, unless this restore (another worker
// maybe, since this one looked) opened a folder of another identity there before: then the
// folder was moved or replaced, and claim reports false. The look-up and the record are one
// step under the lock, so that every worker holds a path to the identity first seen there.
func (s *destShared) claim(path string, id fileID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if known, ok := s.seen[path]; ok {
		return known == id
	}
	s.seen[path] = id
	return true
}

// makeChild makes the folder part in parent (path below the destination), found missing,
// and opens it, unless this restore opened a folder at path before: then it is only opened
// again (another worker may have made it since this one looked; one moved away is not made
// again, and the open fails with ENOENT). The look-up and the mkdir are one step under the
// lock, so that no worker makes again a folder another one has just opened. EEXIST from
// mkdir is another worker's folder, or someone else's: opened, and claimed as any.
func (s *destShared) makeChild(parent int, path, part string) (int, error) {
	s.mu.Lock()
	var err error
	if _, seen := s.seen[path]; !seen {
		if err = eintr.Mkdirat(parent, part, s.mkdirMode(path)); err == nil {
			s.created[path] = true
		}
	}
	s.mu.Unlock()
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	return eintr.Openat(parent, part, childFlags, 0)
}

// maxOpenChain is how many folders of a chain stay open at most: the top ones, which the
// next entries most likely share. Below them a deeper path keeps only the folder it walks
// through and the last one open, so that a path of any depth is restored within the limit
// on open files (see fdJobs), each closed folder opened again, and checked again, when
// the path is next checked or walked. Under a small limit fewer stay open (openChain).
const maxOpenChain = 64

// openChain is how many folders of a chain stay open under the limit on open files: at most
// a quarter of it (fdJobs gives the workers half), at least 2, at most maxOpenChain.
var openChain = sync.OnceValue(func() int {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return maxOpenChain
	}
	return int(max(2, min(lim.Cur/4, maxOpenChain)))
})

// truncate closes the chain's folders from the nth on.
func (t *destTree) truncate(n int) {
	for _, f := range t.chain[n:] {
		if f.fd >= 0 {
			unix.Close(f.fd)
		}
	}
	t.chain = t.chain[:n]
}

// parentFD is the descriptor of the folder above the chain's ith.
func (t *destTree) parentFD(i int) int {
	if i == 0 {
		return t.root
	}
	return t.chain[i-1].fd
}

// dir returns a descriptor of the folder name ("" for the destination itself), creating
// missing folders when create is set. The descriptor stays owned by t: it is valid until
// the next call of dir.
func (t *destTree) dir(name string, create bool) (int, error) {
	if name == "" {
		return t.root, nil
	}
	parts := strings.Split(name, "/")
	mounts, quiet := t.steady()
	kept := 0
	for kept < len(t.chain) && kept < len(parts) && t.chain[kept].fd >= 0 && t.chain[kept].part == parts[kept] && (quiet || t.verify(kept) == nil) {
		kept++
	}
	if quiet && t.extends(kept, parts) {
		kept = len(t.chain)
	}
	if quiet && kept < len(parts) && t.climb(kept, parts) {
		kept = len(parts)
	}
	t.truncate(kept)
	// Each folder's name is a slice of name, not a copy: a 64 KiB name holds 32,000
	// folders, and a copy of the path so far for each cost a gigabyte.
	end := kept - 1 // where the name of the chain's ith folder ends in name
	for _, p := range parts[:kept] {
		end += len(p)
	}
	for i := kept; i < len(parts); i++ {
		end += 1 + len(parts[i])
		f, err := t.openChild(t.parentFD(i), name[:end], parts[i], create)
		if err != nil {
			return -1, err
		}
		if i > openChain() {
			unix.Close(t.chain[i-1].fd) // walked through: its child is open
			t.chain[i-1].fd = -1
		}
		t.chain = append(t.chain, f)
	}
	t.checkedAt = mounts
	return t.chain[len(t.chain)-1].fd, nil
}

// steady reports whether the chain is still as it was checked: the guard quiet, and no mount
// come or gone since, or the chain found whole again since the last (verifyAll: an open and
// an fstat a folder, none of openChild's watch nor record of the name, whose hash made a
// chain N deep cost N squared bytes each time a mount came). mounts is the guard's count of
// mount changes, to record once the chain has been checked whole again.
func (t *destTree) steady() (mounts uint64, ok bool) {
	mounts, quiet := t.guard.quiet()
	if quiet && mounts != t.checkedAt && t.verifyAll() == nil {
		t.checkedAt = mounts
	}
	return mounts, quiet && mounts == t.checkedAt
}

// extends reports whether parts lie at or below the folder the chain opened last, whose
// folders from the kept-th on may be closed (below the top openChain ones): the walk then
// goes on from that last folder, still open, instead of opening each closed one again,
// which made restoring a tree N folders deep take N squared over two opens. Asked only
// while the moveGuard reports that no folder can have moved: a closed folder cannot be
// checked through its descriptor.
func (t *destTree) extends(kept int, parts []string) bool {
	n := len(t.chain)
	if kept >= n || n > len(parts) || t.chain[n-1].fd < 0 {
		return false
	}
	for i := kept; i < n; i++ {
		if t.chain[i].part != parts[i] {
			return false
		}
	}
	return true
}

// climb opens again the folder of parts, a folder above the one the chain opened last
// whose chain entries from the kept-th on may be closed, through ".." from the nearest
// open one below it, each folder on the way checked to be the one first opened there: the
// folders' times are set below first (post-order), and walking each path again from the top made a
// tree N folders deep take N squared over two opens. It reports false, leaving the chain
// as it was found open, where parts is not on the chain or a folder is not the one
// recorded. Asked only while the moveGuard reports that no folder can have moved.
func (t *destTree) climb(kept int, parts []string) bool {
	last := len(parts) - 1
	if len(t.chain) <= len(parts) {
		return false
	}
	for i := kept; i <= last; i++ {
		if t.chain[i].part != parts[i] {
			return false
		}
	}
	// The nearest open folder at or below parts' (the chain's last folder is open), so that
	// every one climbed into is closed.
	below := len(t.chain) - 1
	for i := last; i < below; i++ {
		if t.chain[i].fd >= 0 {
			below = i
			break
		}
	}
	for ; below > last; below-- {
		fd, err := eintr.Openat(t.chain[below].fd, "..", childFlags, 0)
		if err != nil {
			return false
		}
		var st unix.Stat_t
		if eintr.Fstat(fd, &st) != nil || idOf(&st) != t.chain[below-1].id {
			unix.Close(fd)
			return false
		}
		unix.Close(t.chain[below].fd) // below the folder asked for: truncated next
		t.chain[below].fd = -1
		t.chain[below-1].fd = fd
	}
	return true
}

// check reports whether the folders of name, which the last dir call opened, are all still
// at their names: asked again just before a file is renamed into the last of them.
func (t *destTree) check(name string) error {
	return t.checkFolders(name, true)
}

// checkBeforeLink is check before a link into the folder name: while the guard is quiet,
// the one way the folder can have left its name, removed (or renamed over) while open, is
// not asked about, since the kernel refuses a link into a removed folder (ENOENT), which
// the caller words as that removal (removedDir). A system call per file fewer.
func (t *destTree) checkBeforeLink(name string) error {
	return t.checkFolders(name, false)
}

// checkFolders is check, which asks whether the last folder was removed while open only
// when askRemoved.
func (t *destTree) checkFolders(name string, askRemoved bool) error {
	if name == "" {
		return nil
	}
	if depth := strings.Count(name, "/") + 1; depth != len(t.chain) || t.chain[depth-1].name != name {
		return fmt.Errorf("%s is not the folder open", format.QuoteName(name)) // a bug, not the destination's doing
	}
	mounts, quiet := t.steady()
	if quiet {
		if !askRemoved {
			return nil
		}
		return t.alive(len(t.chain) - 1)
	}
	if err := t.verifyAll(); err != nil {
		return err
	}
	t.checkedAt = mounts
	return nil
}

// verifyAll checks that every folder of the chain is still at its name.
func (t *destTree) verifyAll() error {
	for i := range t.chain {
		if t.parentFD(i) < 0 {
			return t.recheck(i)
		}
		if err := t.verify(i); err != nil {
			return err
		}
	}
	return nil
}

// recheck checks the chain's folders from the ith on, whose parent was closed (see
// openChain): each is opened again in the one above, never through a symlink, and
// must be the folder first opened at its name.
func (t *destTree) recheck(i int) error {
	parent, held := t.chain[i-2].fd, -1 // the nearest folder still open is above the closed one
	defer func() {
		if held >= 0 {
			unix.Close(held)
		}
	}()
	for _, f := range t.chain[i-1:] {
		fd, err := eintr.Openat(parent, f.part, childFlags, 0)
		var st unix.Stat_t
		op := "open"
		if err == nil {
			op = "fstat"
			err = eintr.Fstat(fd, &st)
		}
		if fd >= 0 {
			if held >= 0 {
				unix.Close(held)
			}
			held = fd
		}
		switch {
		case err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR):
			// An I/O error says nothing of a move.
			return fmt.Errorf("%s: %s: %w", format.QuoteName(f.name), op, err)
		case err != nil || idOf(&st) != f.id:
			return fmt.Errorf("%s %w", format.QuoteName(f.name), errMoved)
		}
		parent = fd
	}
	return nil
}

// alive checks that the chain's ith folder was not removed, nor renamed over, while open:
// no move of it to tell the guard, but no longer at its name either. An fstat that fails
// (an I/O error) is that error: it says nothing of a move.
func (t *destTree) alive(i int) error {
	var st unix.Stat_t
	if err := eintr.Fstat(t.chain[i].fd, &st); err != nil {
		// A check that cannot be made (an I/O error) says nothing of a move.
		return fmt.Errorf("%s: fstat: %w", format.QuoteName(t.chain[i].name), err)
	}
	if st.Nlink == 0 {
		return fmt.Errorf("%s %w", format.QuoteName(t.chain[i].name), errMoved)
	}
	return nil
}

// removedDir is err, a failure to make a file in the folder dir (DEST when "") open as dfd,
// unless it is the kernel's refusal to make one in a folder removed while open (ENOENT, or
// EPERM for an unnamed file): then it says so, as for a folder moved away. Removing a
// folder queues no event for the move guard while the restore holds it open. Any other
// error (ENOSPC, which stops the restore) stays as it is.
func removedDir(dir string, dfd int, err error) error {
	var st unix.Stat_t
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EPERM) || eintr.Fstat(dfd, &st) != nil || st.Nlink != 0 {
		return err
	}
	if dir == "" {
		return fmt.Errorf("the destination %w", errMoved)
	}
	return fmt.Errorf("%s %w", format.QuoteName(dir), errMoved)
}

// verify checks that the chain's ith folder is still the folder at its name in the one
// above.
func (t *destTree) verify(i int) error {
	f := t.chain[i]
	return folderAt(t.parentFD(i), f.part, f.name, f.id)
}

// folderAt checks that part, in the folder open as parent, is still the folder id, named
// name in DEST. A lookup that fails for another reason than a missing name (an I/O error)
// is that error: it says nothing of a move.
func folderAt(parent int, part, name string, id fileID) error {
	var st unix.Stat_t
	err := eintr.Fstatat(parent, part, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s: lstat: %w", format.QuoteName(name), err)
	case err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || idOf(&st) != id:
		return fmt.Errorf("%s %w", format.QuoteName(name), errMoved)
	}
	return nil
}

// fileID is a file's identity, whatever its name: its device and inode.
type fileID = eintr.ID

func idOf(st *unix.Stat_t) fileID { return eintr.IDOf(st) }

// foundMissing, when set (by tests only), is called when openChild has found its folder
// missing, before it makes it: what another worker, or someone else, does to the folder
// then is what it must see.
var foundMissing func(path string)

// childFlags open a folder below the destination: never through a symlink.
const childFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openChild opens the folder part in parent (path below the destination), creating it when
// missing and create is set, unless this restore opened a folder of that name before: one
// missing now was moved away, and is not made again, and one of another identity was
// replaced.
func (t *destTree) openChild(parent int, path, part string, create bool) (openFolder, error) {
	fd, err := eintr.Openat(parent, part, childFlags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if foundMissing != nil {
			foundMissing(path)
		}
		fd, err = t.makeChild(parent, path, part)
	}
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return openFolder{}, fmt.Errorf("%s %w", format.QuoteName(path), errNotBeneath)
	case errors.Is(err, unix.ENOENT) && t.wasSeen(path):
		return openFolder{}, fmt.Errorf("%s %w", format.QuoteName(path), errMoved)
	case err != nil:
		return openFolder{}, fmt.Errorf("%s: %w", format.QuoteName(path), err)
	}
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return openFolder{}, fmt.Errorf("%s: %w", format.QuoteName(path), err)
	}
	id := idOf(&st)
	// Watched, then checked to be still at its name: a move before the watch is seen here,
	// one after it by the guard.
	t.guard.watch(fd, uint64(st.Dev))
	if err := folderAt(parent, part, path, id); err != nil {
		unix.Close(fd)
		return openFolder{}, err
	}
	if !t.claim(path, id) {
		unix.Close(fd)
		return openFolder{}, fmt.Errorf("%s %w", format.QuoteName(path), errMoved)
	}
	return openFolder{name: path, part: part, fd: fd, id: id}, nil
}
