package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSealedEIO: strace injects EIO on the Nth pread64 of an encrypted archive (2,500
// files, a central directory of several age chunks) for verify --jobs 1 and list, both
// with --identity. Two ways the rule (a command that met an I/O error says "input/output
// error", exits 0 only when nothing failed; no damage or tampering is claimed for a failed
// read) is broken:
//   - seal's plain reads up to 8 chunks at once and keeps those age decrypted; an EIO on a
//     chunk after the first of a read is dropped (the chunk is read again later and
//     succeeds): verify says "ok: 2500 files ... verified", exit 0, list exits 0 (N = 5..8);
//   - an EIO on the manifest's read leaves no recorded status, and verify then claims
//     "receipt … says complete, but the manifest inside the archive says "" (the receipt
//     was edited?)": a tampering claim for a failed read (N = 9).
func TestAttackSealedEIO(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	key := newAgeKey(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2500 {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("file_with_a_longish_name_%d.txt", i)), []byte(fmt.Sprintf("content %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arch := filepath.Join(dir, "e.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "--recipient", key.recipient, "big"), exitComplete)
	for _, cmdline := range [][]string{{"verify", "--jobs", "1", "-i", key.identity, arch}, {"list", "-i", key.identity, arch}} {
		for n := 1; n <= 20; n++ {
			failed, out, code := withEIO(t, dir, arch, n, cmdline...)
			if len(failed) == 0 {
				continue
			}
			injected := failed[len(failed)-1]
			if !strings.Contains(out, "input/output error") || code == 0 {
				t.Errorf("backup %s: EIO injected at pread64 #%d of the encrypted archive:\n%s\nexit %d, and no word of it:\n%s",
					cmdline[0], n, injected, code, lastLines(out, 3))
			}
			if strings.Contains(out, "the receipt was edited?") {
				t.Errorf("backup %s: EIO injected at pread64 #%d of the encrypted archive:\n%s\nclaimed as tampering:\n%s",
					cmdline[0], n, injected, lastLines(out, 3))
			}
		}
	}
}
