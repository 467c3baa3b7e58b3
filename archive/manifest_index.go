package archive

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"backup/format"
	"backup/skiprules"
)

// manifestIndex is the manifest's index as verify and the read-back use it: verify marks
// each record it meets in the archive as seen, and what is not seen at the end is missing.
type manifestIndex struct {
	*format.Index
	v2       bool
	files    []format.File
	dirs     []format.Dir
	symlinks []format.Symlink

	seenFiles, seenDirs, seenSymlinks []bool
}

func newManifestIndex(m *format.Manifest) *manifestIndex {
	return &manifestIndex{Index: format.NewIndex(m), v2: m.Schema != format.ManifestSchemaV1,
		files: m.Files, dirs: m.Dirs, symlinks: m.Symlinks,
		seenFiles: make([]bool, len(m.Files)), seenDirs: make([]bool, len(m.Dirs)), seenSymlinks: make([]bool, len(m.Symlinks))}
}

// RecordedMeta returns what the manifest x indexes records of e beside its data; nil in a v1
// manifest or when it does not list e.
func (e *Entry) RecordedMeta(x *format.Index) *format.Meta {
	m := x.Manifest()
	switch {
	case e.IsDir:
		if i := x.FindDir(e.Name); i >= 0 {
			return &m.Dirs[i].Meta
		}
	case e.Kind == "":
		f, _ := x.File(e.Name)
		return f.Meta
	case e.Kind == skiprules.KindSymlink:
		if i := x.FindSymlink(e.Name); i >= 0 {
			return &m.Symlinks[i].Meta
		}
	}
	return nil
}

// targetSum is the SHA-256 the data of a symlink entry must have: its recorded target's.
func targetSum(target string) string {
	sum := sha256.Sum256([]byte(target))
	return hex.EncodeToString(sum[:])
}

// ErrTarget is the damage of a symlink whose target no Linux symlink holds: restore cannot
// create it, so verify reports it too.
var ErrTarget = errors.New("symlink target is empty, holds a NUL or is longer than 4095 bytes")

// maxTarget is the longest target a Linux symlink holds: symlink(2) takes it as a path,
// PATH_MAX (4096) bytes with its NUL, and refuses a longer one (ENAMETOOLONG).
const maxTarget = 4095

// CheckTarget is ErrTarget when target is empty, holds a NUL byte or is longer than
// maxTarget.
func CheckTarget(target string) error {
	if target == "" || len(target) > maxTarget || strings.IndexByte(target, 0) >= 0 {
		return ErrTarget
	}
	return nil
}

// compareOwner says what is wrong when the owner e's ux field holds is not the one the
// manifest records: both are written from the same lstat, so a difference is damage.
func compareOwner(e *Entry, m *format.Meta) *Problem {
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

// compareMode says what is wrong when e would be restored with another mode than the one m
// records, or with none of the archive's (made on another host): the central record holds
// the only copy of the mode in the archive (no local header repeats it). What restore makes
// of each is compared, not their bits, which Entry does not keep.
func compareMode(e *Entry, m *format.Meta) *Problem {
	if m == nil || m.Mode == 0 {
		return nil
	}
	want, _ := restoredMode(&zip.FileHeader{Name: e.rawName(), CreatorVersion: creatorUnix << 8, ExternalAttrs: m.Mode << 16})
	switch {
	case !e.Host.unixLike() || e.noUnixMode:
		return &Problem{Entry: e.StoredName(), Reason: fmt.Sprintf("no Unix mode (made on host %d), the manifest says %v", e.Host, want)}
	case e.Mode != want:
		return &Problem{Entry: e.StoredName(), Reason: fmt.Sprintf("mode %v, the manifest says %v", e.Mode, want)}
	}
	return nil
}

// Mtime is e's mtime as the archive records it, with m, e's record (nil for none): the zip's
// whole seconds, or the seconds m records where the zip's field is clamped (see
// fullSeconds), and m's nanoseconds.
func (e *Entry) Mtime(m *format.Meta) time.Time {
	if m == nil {
		return e.Modified
	}
	t := e.Modified.Truncate(time.Second)
	if s := t.Unix(); fullSeconds(s, m.MtimeSec) {
		t = time.Unix(m.MtimeSec, 0)
	}
	if m.MtimeNsec > 0 && m.MtimeNsec < 1e9 {
		t = t.Add(time.Duration(m.MtimeNsec))
	}
	return t
}

// fullSeconds says whether recorded, a manifest's mtime_sec, stands for an entry whose zip
// seconds are zipSec: only where those are clamped to the extended timestamp's limit, and
// beyond it the same way. Anything else contradicts the archive, and the zip's are taken.
func fullSeconds(zipSec, recorded int64) bool {
	return recorded != 0 && (zipSec == math.MaxInt32 && recorded > zipSec || zipSec == math.MinInt32 && recorded < zipSec)
}
