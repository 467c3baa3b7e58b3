package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackKeyFileOneLongLine: an identity or recipients file of 16 MiB (the most a key
// file may be) whose one line never ends, a log or a binary given by mistake, was refused
// in Go's words: "--identity FILE: bufio.Scanner: token too long". A line may be as long as
// the file: it is refused for what it is, "line 1: …", as any line that holds no key.
func TestAttackKeyFileOneLongLine(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir, archive := sealedArchive(t, key)
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte(strings.Repeat("a", 16<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"verify", "-i", long, archive},
		{"create", "--recipients-file", long, "-o", "x.zip.age", "app"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || strings.Contains(r.stderr, "bufio") || !strings.Contains(r.stderr, long+": line 1: ") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and the file's line 1 named", args[0], r.code, r.stderr)
		}
	}
}
