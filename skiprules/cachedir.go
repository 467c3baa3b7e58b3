package skiprules

import (
	"bytes"
	"io"
	"os"
)

// CacheDirTagName is the name of the file that marks a cache directory, and
// cacheDirSignature the content it must begin with; both from
// https://bford.info/cachedir/.
const CacheDirTagName = "CACHEDIR.TAG"

const cacheDirSignature = "Signature: 8a477f597d28d172789f06886806bc55"

// Dir is a directory a rule looks into. The walker's Entry is one: it opens
// files relative to the directory's own descriptor, so the file read is in
// the directory the walk is in, even if its path was swapped for a symlink.
type Dir interface {
	// OpenFile opens the regular file name in the directory, without
	// following a symlink; it fails for anything that is not a regular file,
	// without opening it (a FIFO would block).
	OpenFile(name string) (*os.File, error)
}

// IsCacheDir reports whether dir holds a valid CACHEDIR.TAG: a regular file
// (a symlink does not count) whose content begins with
// "Signature: 8a477f597d28d172789f06886806bc55". A nil dir holds none.
//
// Any error reading the tag means "not a cache": wrongly archiving a cache
// costs space, wrongly excluding data loses it.
func IsCacheDir(dir Dir) bool {
	if dir == nil {
		return false
	}
	f, err := dir.OpenFile(CacheDirTagName)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, len(cacheDirSignature))
	if _, err := io.ReadFull(f, buf); err != nil {
		return false
	}
	return bytes.Equal(buf, []byte(cacheDirSignature))
}
