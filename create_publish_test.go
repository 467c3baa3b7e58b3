package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backupUnderStrace runs the binary under strace, which makes the system calls it names
// fail on the path it names (a file for renames, a folder for its fsync).
func backupUnderStrace(t *testing.T, dir, path, inject string, args ...string) result {
	t.Helper()
	call, _, _ := strings.Cut(inject, ":")
	return straceRun(t, dir, path, call, inject, args...)
}

// TestCreatePublishFails makes the receipt's rename or the folder's fsync fail once the
// archive is renamed: the run fails, and the final paths hold the old pair (or nothing),
// never a new archive beside an old receipt or none.
func TestCreatePublishFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		old     bool
		apart   bool   // the receipt in a folder of its own
		target  string // "receipt" (its rename fails) or "dir" (the receipt's folder's fsync fails)
		inject  string
		wantErr string
	}{
		{"receipt rename, no old pair", false, false, "receipt", "renameat,renameat2:error=EXDEV", "invalid cross-device link"},
		{"receipt rename, old pair", true, false, "receipt", "renameat,renameat2:error=EXDEV", "invalid cross-device link"},
		{"receipt rename EPERM, old pair", true, false, "receipt", "renameat,renameat2:error=EPERM", "operation not permitted"},
		{"folder fsync, no old pair", false, false, "dir", "fsync:error=EIO", "input/output error"},
		{"folder fsync, old pair", true, false, "dir", "fsync:error=EIO", "input/output error"},
		{"receipt folder fsync, old pair apart", true, true, "dir", "fsync:error=EIO", "input/output error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "new\n"}})
			archive, receipt := filepath.Join(dir, "out", "app.zip"), filepath.Join(dir, "out", "app.zip.receipt.json")
			if tt.apart {
				receipt = filepath.Join(dir, "receipts", "app.json")
			}
			for _, d := range []string{filepath.Dir(archive), filepath.Dir(receipt)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tt.old {
				writeFile(t, archive, "old archive")
				writeFile(t, receipt, "old receipt")
			}
			target := receipt
			if tt.target == "dir" {
				target = filepath.Dir(receipt)
			}
			r := backupUnderStrace(t, dir, target, tt.inject, "create", "--force", "-o", archive, "--receipt", receipt, "app")
			if r.code != exitFailed || !strings.Contains(r.stderr, tt.wantErr) || !strings.Contains(r.stderr, "the final paths are as they were") {
				t.Errorf("exit %d, stderr %q; want %d, %q and that the final paths are as they were", r.code, r.stderr, exitFailed, tt.wantErr)
			}
			if tt.old {
				assertContent(t, archive, "old archive")
				assertContent(t, receipt, "old receipt")
			} else if exists(archive) {
				t.Errorf("a new archive is at %s after a failed run", archive)
			}
			for _, d := range []string{filepath.Dir(archive), filepath.Dir(receipt)} {
				if extra := leftovers(t, d, "app.zip", "app.zip.receipt.json", "app.json"); len(extra) > 0 {
					t.Errorf("left behind in %s: %v", d, extra)
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
