package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreHeldStdoutFull runs restore --json-lines into a DEST on a full tmpfs, its
// files there already, with stdout appended (>>) to DEST/ev.jsonl, a file the archive does
// not hold. The events written before the plan were held (heldStdout) and written when the
// plan said the file was not restored; that write failed (ENOSPC) and its error was taken
// for the refusal: exit 2 ("write /dev/stdout: no space left on device", a usage error),
// nothing restored, where with stdout outside DEST the same restore exits 0 and says
// "writing --json-lines to stdout: …". Correct: the held events' failure said as any cut
// output is, the exit code the restore's own.
func TestAttackRestoreHeldStdoutFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, mnt, "64k")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "a.zip", "mnt/d"), exitComplete)
	for _, out := range []string{"mnt/ev.jsonl", "mnt/d/ev.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, out), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fill, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = fill.Write(make([]byte, 4096))
	}
	fill.Close()
	for _, out := range []string{"mnt/ev.jsonl", "mnt/d/ev.jsonl"} {
		code, stderr, _ := appendStdout(t, dir, filepath.Join(dir, out), "restore", "--json-lines", "a.zip", "mnt/d")
		if code != exitComplete || !strings.Contains(stderr, "writing --json-lines to stdout: no space left on device") || strings.Contains(stderr, "write /dev/stdout") {
			t.Errorf(">> %s: exit %d, stderr %q; want 0 and the output said cut", out, code, stderr)
		}
	}
}
