package engine

import (
	"path"

	"backup/atomicfile"
	"backup/walker"
)

// RuleRunTemp is the receipt's rule for a file another run is writing: an archive, receipt
// or cached copy under its temp name, which would be stored half-written (see
// atomicfile.CreateTemp).
const RuleRunTemp = "backup-temp"

// isRunTemp reports whether en is a temp file a run holds open to write. One that no run
// holds (a killed run's) is the user's to keep, and stored as any file.
func isRunTemp(en walker.Entry) bool {
	if en.Rel == "" || !atomicfile.IsTempName(path.Base(en.Rel)) {
		return false
	}
	f, err := en.OpenSibling(path.Base(en.Rel))
	if err != nil {
		return false // stored, or warned about, as any file
	}
	defer f.Close()
	return atomicfile.HeldByRun(f)
}
