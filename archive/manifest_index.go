package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"backup/skiprules"
)

// manifestIndex holds a manifest's records by path, for verify and restore to look entries
// up in.
type manifestIndex struct {
	v2       bool
	files    map[string]File
	dirs     map[string]Dir
	symlinks map[string]Symlink
}

func newManifestIndex(m *Manifest) *manifestIndex {
	x := &manifestIndex{v2: m.Schema == ManifestSchema, files: make(map[string]File, len(m.Files)),
		dirs: make(map[string]Dir, len(m.Dirs)), symlinks: make(map[string]Symlink, len(m.Symlinks))}
	for _, f := range m.Files {
		x.files[f.Path] = f
	}
	for _, d := range m.Dirs {
		x.dirs[d.Path] = d
	}
	for _, l := range m.Symlinks {
		x.symlinks[l.Path] = l
	}
	return x
}

// meta returns what the manifest records of the entry e beside its data; nil in a v1
// manifest or when it does not list e.
func (x *manifestIndex) meta(e *Entry) *Meta {
	switch {
	case e.IsDir:
		if d, ok := x.dirs[e.Name]; ok {
			return &d.Meta
		}
	case e.Kind == "":
		return x.files[e.Name].Meta
	default:
		if l, ok := x.symlinks[e.Name]; ok && e.Kind == skiprules.KindSymlink {
			return &l.Meta
		}
	}
	return nil
}

// targetSum is the SHA-256 the data of a symlink entry must have: its recorded target's.
func targetSum(target string) string {
	sum := sha256.Sum256([]byte(target))
	return hex.EncodeToString(sum[:])
}

// compareOwner says what is wrong when the owner e's ux field holds is not the one the
// manifest records: both are written from the same lstat, so a difference is damage.
func compareOwner(e *Entry, m *Meta) *Problem {
	switch {
	case m == nil:
		return nil
	case !e.HasOwner:
		return &Problem{Entry: e.StoredName(), Reason: "no owner field, the manifest records one"}
	case e.UID != m.UID || e.GID != m.GID:
		return &Problem{Entry: e.StoredName(), Reason: fmt.Sprintf("owner %d:%d, the manifest says %d:%d", e.UID, e.GID, m.UID, m.GID)}
	}
	return nil
}
