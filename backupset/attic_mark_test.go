package backupset

import (
	"os"
	"path/filepath"
	"testing"

	"backup/atomicfile"
)

// TestAtticCopyMarked: prune --attic's copy, under its journal's temp name, is held while it
// is written, as a run's temp files are: a run backing up a tree the attic is in leaves it
// out rather than store it half-written.
func TestAtticCopyMarked(t *testing.T) {
	j := &atticJournal{dir: t.TempDir()}
	f, err := j.createTemp("app-20261207T104500Z.zip")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.close)
	if !atomicfile.IsRunTempName(filepath.Base(f.Name())) {
		t.Errorf("%s is not named as a run's temp file", f.Name())
	}
	probe, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if !atomicfile.HeldByRun(probe) {
		t.Error("the attic's copy is not held while it is written")
	}
	f.Close()
}
