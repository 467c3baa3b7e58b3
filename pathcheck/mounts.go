package pathcheck

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A bind mount of a folder gives it a second path whose folders above are not the folders
// above the first: DEST/app mounted at /undo has /, not DEST, above it. Where a folder lies
// in its file system (the mount table's device, and its path from that file system's root)
// is the same by either path.

// mount is one line of /proc/self/mountinfo: the file system's device, the folder of it the
// mount shows (its root), and where it shows it.
type mount struct{ dev, root, at string }

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
		out = append(out, mount{dev: f[2], root: unescapeMount(f[3]), at: unescapeMount(f[4])})
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
// mount whose mount point is the longest that holds path (the last listed of those at one
// point, which covers the others).
func locate(mounts []mount, path string) (dev, inFS string, ok bool) {
	best := -1
	for i, m := range mounts {
		if under(path, m.at) && (best < 0 || len(m.at) >= len(mounts[best].at)) {
			best = i
		}
	}
	if best < 0 {
		return "", "", false
	}
	m := mounts[best]
	rest, _ := filepath.Rel(m.at, path)
	return m.dev, filepath.Join(m.root, rest), true
}

// under says the clean absolute path is dir or below it.
func under(path, dir string) bool {
	return dir == "/" || path == dir || strings.HasPrefix(path, dir+"/")
}

// insideByMounts says the resolved absolute path is the folder at root, or below it, in
// their file system, whichever mounts reach them.
func (t *mountTable) insideByMounts(path, root string) bool {
	mounts := t.get()
	dDev, dPath, ok := locate(mounts, path)
	if !ok {
		return false
	}
	rDev, rPath, ok := locate(mounts, root)
	return ok && dDev == rDev && under(dPath, rPath)
}
