package pathcheck

import (
	"os"
	"path/filepath"
	"strings"
)

// Resolve is the absolute path the kernel reaches at path, as resolvePath says: for a caller
// that must name, by path, the folder it opens (a restore's DEST given as lnk/..).
func Resolve(path string) string { return resolvePath(path) }

// resolvePath is the absolute path the kernel reaches at path: every symlink resolved as far
// as the path exists, a dangling one by its target, and ".." taken after the symlink before
// it, as the kernel does (so a/.. is not "." when a is a symlink). The part that does not
// exist yet is joined as given.
func resolvePath(path string) string {
	abs := path
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(path)
		}
		abs = wd + string(filepath.Separator) + path // not Join: Join would clean a/.. away
	}
	return resolveFrom(abs, 0)
}

// maxLinks is how many symlinks resolvePath follows, as the kernel's limit (40) on Linux.
const maxLinks = 40

func resolveFrom(abs string, links int) string {
	prefix, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(prefix); err == nil {
			if rest == "" {
				return r
			}
			first, after, _ := strings.Cut(rest, string(filepath.Separator))
			if target, err := os.Readlink(filepath.Join(r, first)); err == nil && links < maxLinks {
				// A dangling symlink: what is created through it lands at its target.
				if !filepath.IsAbs(target) {
					target = r + string(filepath.Separator) + target
				}
				return resolveFrom(target+string(filepath.Separator)+after, links+1)
			}
			return filepath.Join(r, rest)
		}
		dir, base := filepath.Split(strings.TrimRight(prefix, string(filepath.Separator)))
		if dir == "" || base == "" {
			return filepath.Clean(abs)
		}
		prefix, rest = dir, base+string(filepath.Separator)+rest
		rest = strings.TrimSuffix(rest, string(filepath.Separator))
	}
}

// resolveDir is path made absolute with the symlinks of its folder resolved, its last name as
// given: where a file written by rename lands (a symlink there is replaced, not followed).
func resolveDir(path string) string {
	i := strings.LastIndexByte(path, filepath.Separator)
	if i < 0 {
		return filepath.Join(resolvePath("."), path)
	}
	// Not filepath.Dir, which would clean lnk/.. away before lnk is resolved.
	return filepath.Join(resolvePath(path[:i+1]), path[i+1:])
}
