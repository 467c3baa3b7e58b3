package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestAttackMoreRecipientsThanAgeDecrypts: age writes a file to any number of recipients,
// but reads none whose header names more than 1024 (its parser's limit): such an archive
// opens with no key, by backup or by age -d. A recipients file of 1,025 keys (a team's, a
// file a script appends to) made one all the same and said complete, exit 0: a backup no
// one can ever restore. Now it is refused, exit 2, before anything is written, by one line
// that names the file and the limit.
func TestAttackMoreRecipientsThanAgeDecrypts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	var lines []string
	for range 1025 {
		id, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, id.Recipient().String())
	}
	file := writeRecipients(t, lines...)
	for _, args := range [][]string{
		{"create", "--output-dir", "set", "--recipients-file", file, "app"},
		{"create", "-o", "app.zip.age", "--recipients-file", file, "app"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "1024") || !strings.Contains(r.stderr, file) {
			t.Errorf("%q: exit %d, stderr %q; want 2, naming the file and age's limit", args[1], r.code, r.stderr)
		}
	}
	for _, name := range []string{"set", "app.zip.age"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused run made %s", name)
		}
	}
	// 1,024 recipients are what age reads: taken, and the archive opens.
	key := newAgeKey(t)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "ok.zip.age", "--recipients-file", writeRecipients(t, append(lines[:1023], key.recipient)...), "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-i", key.identity, "ok.zip.age"), exitComplete)
}
