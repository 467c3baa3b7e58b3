package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackPlainRunNamedSealed: a run without recipients whose -o names an encrypted
// archive (NAME.zip.age) is refused, exit 2, nothing written: the name says that the file
// is encrypted, and a script whose recipients went missing (backup create $KEYS -o
// /mnt/nas/web1.zip.age, $KEYS empty) would put a plain copy of everything where only
// ciphertext should go. With --force it replaced the encrypted archive there by the plain
// zip. Before, both wrote a plain zip under the name and said complete (exit 0), as a set
// does not let a run that lost its --recipient do.
func TestAttackPlainRunNamedSealed(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir, archive := sealedArchive(t, key)
	sealed := must(os.ReadFile(archive))
	for _, args := range [][]string{
		{"create", "-o", "new.zip.age", "app"},
		{"create", "-o", filepath.Join(dir, "out", "new.ZIP.AGE"), "--dry-run", "app"},
		{"create", "-o", archive, "--force", "app"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--recipient") {
			t.Errorf("%q: exit %d, stderr %q; want 2, naming --recipient", args, r.code, r.stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.zip.age")); err == nil {
		t.Error("a plain run wrote new.zip.age")
	}
	if !bytes.Equal(must(os.ReadFile(archive)), sealed) {
		t.Error("a plain run replaced the encrypted archive")
	}
	// The name is the user's to give an encrypted archive, and a plain one may be called
	// anything else.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--recipient", key.recipient, "-o", "new.zip.age", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "plain.zip", "app"), exitComplete)
}
