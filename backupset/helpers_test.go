package backupset

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"backup/format"
)

// fakeRun is a run laid out in a test set: an archive (unless failed) and its receipt.
type fakeRun struct {
	name    string
	status  format.Status
	started time.Time
}

// writeRun writes the run's archive (arbitrary bytes: the set logic never reads archives,
// a Verifier does) and a receipt that matches it.
func writeRun(t *testing.T, dir string, r fakeRun) {
	t.Helper()
	rc := &format.Receipt{Schema: format.ReceiptSchema, Status: r.status, StartedAt: r.started, FinishedAt: r.started.Add(time.Minute)}
	if r.status != format.Failed {
		content := []byte("archive " + r.name)
		writeFile(t, filepath.Join(dir, r.name), string(content))
		rc.Archive = &format.ArchiveInfo{Path: filepath.Join("/elsewhere", r.name), Size: int64(len(content))}
	}
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, r.name+format.ReceiptSuffix), string(data))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stamp names the first run started at tm, as backup create would.
func stamp(source string, tm time.Time) string { return ArchiveName(source, tm, 1) }

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func itoa(n int) string { return strconv.Itoa(n) }

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
