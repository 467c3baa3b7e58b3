package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/backupset"
	"backup/engine"
	"backup/format"
)

// TestFinishSetDamagedArchive: an archive that fails its read-back never becomes LATEST,
// its receipt stops calling it complete, and the run fails.
func TestFinishSetDamagedArchive(t *testing.T) {
	t.Parallel()
	set := t.TempDir()
	name := "app-20260101T030000Z.zip"
	arch := filepath.Join(set, name)
	garbage := "PK\x03\x04 but not really a zip"
	if err := os.WriteFile(arch, []byte(garbage), 0o600); err != nil {
		t.Fatal(err)
	}
	rc := &format.Receipt{Schema: format.ReceiptSchema, Status: format.Complete, StartedAt: time.Now().UTC(),
		Archive: &format.ArchiveInfo{Path: arch, Size: int64(len(garbage))}}
	data, _ := rc.Marshal()
	if err := os.WriteFile(arch+".receipt.json", data, 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := backupset.Acquire(t.Context(), backupset.Folder{Dir: set}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	c := &creation{cfg: createConfig{set: &setConfig{dir: set, prune: true, keep: backupset.Policy{Last: 1}}},
		target: &fileTarget{receiptFile: receiptFile{outputPaths{archive: arch, receipt: arch + ".receipt.json"}}, inSet: true},
		res:    &engine.Result{Manifest: &format.Manifest{Status: "complete"}}}
	var stderr strings.Builder
	if code := c.finishSet(t.Context(), lock, rc, &stderr); code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	if _, err := os.Lstat(filepath.Join(set, "LATEST")); err == nil {
		t.Error("LATEST was written")
	}
	got := readReceipt(t, arch+".receipt.json")
	if got.Status != format.Failed || !strings.Contains(got.Error, "failed verification") || got.Archive == nil {
		t.Errorf("receipt: status %q, error %q; want failed, the verification error, the arch", got.Status, got.Error)
	}
	for _, line := range []string{"backup: failed: archive " + arch + " failed verification", "backup: LATEST not moved: not activating " + name} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr.String())
		}
	}
}
