package skiprules

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// CacheDirTagName is the name of the file that marks a cache directory, and
// cacheDirSignature the content it must begin with; both from
// https://bford.info/cachedir/.
const CacheDirTagName = "CACHEDIR.TAG"

const cacheDirSignature = "Signature: 8a477f597d28d172789f06886806bc55"

// IsCacheDir reports whether dir holds a valid CACHEDIR.TAG: a regular file
// (lstat; a symlink does not count) whose content begins with
// "Signature: 8a477f597d28d172789f06886806bc55".
//
// Any error reading the tag means "not a cache": wrongly archiving a cache
// costs space, wrongly excluding data loses it.
func IsCacheDir(dir string) bool {
	name := filepath.Join(dir, CacheDirTagName)
	before, err := os.Lstat(name)
	if err != nil || !before.Mode().IsRegular() {
		return false
	}
	// The tag may be swapped for a link or a FIFO between lstat and open;
	// openNoFollow neither follows links nor blocks, and the file opened
	// must be the one we looked at.
	f, err := openNoFollow(name)
	if err != nil {
		return false
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil || !after.Mode().IsRegular() || !os.SameFile(before, after) {
		return false
	}
	buf := make([]byte, len(cacheDirSignature))
	if _, err := io.ReadFull(f, buf); err != nil {
		return false
	}
	return bytes.Equal(buf, []byte(cacheDirSignature))
}
