package pathcheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// A bind mount of a folder gives it a second path whose folders above are not the folders
// above the first: DEST/app mounted at /undo has /, not DEST, above it. Where a folder lies
// in its file system (the mount table's device, and its path from that file system's root)
// is the same by either path.

// mount is one line of /proc/self/mountinfo: its ID, the file system's device, the folder of
// it the mount shows (its root), and where it shows it.
type mount struct {
	id            int
	dev, root, at string
}

// mountTable is the mount table, read once for a Check when first needed.
type mountTable struct {
	read   bool
	mounts []mount // nil when it cannot be read: then nothing is found inside by it
}

func (t *mountTable) get() []mount {
	if !t.read {
		t.read, t.mounts = true, readMounts()
	}
	return t.mounts
}

func readMounts() []mount {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []mount
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		out = append(out, mount{id: id, dev: f[2], root: unescapeMount(f[3]), at: unescapeMount(f[4])})
	}
	return out
}

// unescapeMount undoes the kernel's octal escapes (\040 for a space, \012 for a newline...)
// in a path of the mount table.
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// locate says on which file system the resolved absolute path lies, and where in it: by the
// mount the kernel reaches its deepest existing name through. Not by the longest mount point
// listed that holds it: a mount over a folder above hides the mounts below it, which stay
// listed (a tmpfs over /mnt hides a bind mount at /mnt/b, and /mnt/b is then the tmpfs's).
func (t *mountTable) locate(path string) (dev, inFS string, ok bool) {
	mounts := t.get()
	if mounts == nil {
		return "", "", false
	}
	at, rest := path, ""
	for {
		id, err := mountID(at)
		if err == nil {
			return place(mounts, id, at, rest)
		}
		// Only a name not made yet is taken up to its folder: the mount of a folder that
		// cannot be searched is not known.
		if !errors.Is(err, unix.ENOENT) || at == filepath.Dir(at) {
			return "", "", false
		}
		rest = filepath.Join(filepath.Base(at), rest)
		at = filepath.Dir(at)
	}
}

// mountID is the ID of the mount through which the kernel reaches path (a symlink at its end
// not followed), as /proc/self/fdinfo says of a descriptor opened on it.
func mountID(path string) (int, error) {
	// O_PATH names the file without reading it: a folder the user may not list is placed too.
	fd, err := eintr.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	data, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "mnt_id:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no mnt_id in fdinfo")
}

// place says on which file system, and where in it, lies the name rest below the folder at,
// which the kernel reaches through the mount id.
func place(mounts []mount, id int, at, rest string) (dev, inFS string, ok bool) {
	for _, m := range mounts {
		if m.id != id || !under(at, m.at) {
			continue
		}
		rel, _ := filepath.Rel(m.at, at)
		return m.dev, filepath.Join(m.root, rel, rest), true
	}
	return "", "", false
}

// under says the clean absolute path is dir or below it.
func under(path, dir string) bool {
	return dir == "/" || path == dir || strings.HasPrefix(path, dir+"/")
}

// insideByMounts says the resolved absolute path is the folder at root, or below it, in
// their file system, whichever mounts reach them.
func (t *mountTable) insideByMounts(path, root string) bool {
	dDev, dPath, ok := t.locate(path)
	if !ok {
		return false
	}
	rDev, rPath, ok := t.locate(root)
	return ok && dDev == rDev && under(dPath, rPath)
}

// samePlace says the resolved absolute paths are one name in one file system, whichever
// mounts reach them.
func (t *mountTable) samePlace(a, b string) bool {
	aDev, aPath, ok := t.locate(a)
	if !ok {
		return false
	}
	bDev, bPath, ok := t.locate(b)
	return ok && aDev == bDev && aPath == bPath
}
