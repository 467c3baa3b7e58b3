package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackPlainRunReplacesSealedArchive: -o names an encrypted archive as the user says,
// .age or not (-o /mnt/nas/web1.zip --recipient KEY), and a run without recipients into
// that name with --force (backup create $KEYS --force -o /mnt/nas/web1.zip, $KEYS empty)
// replaced the age file there with a plain zip of everything and said complete: the refusal
// of a plain run over ciphertext went by the name alone. The file is known to be ciphertext
// by its first bytes, as a set knows by its LATEST: such a run is refused, exit 2, and the
// encrypted archive stays.
func TestAttackPlainRunReplacesSealedArchive(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"secret.txt": {content: "the plaintext\n"}})
	archive := filepath.Join(dir, "web1.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--recipient", key.recipient, "-o", archive, "app"), exitComplete)
	sealed := must(os.ReadFile(archive))
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--force", "-o", archive, "app")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--recipient") || strings.Count(r.stderr, "\n") > 2 {
		t.Errorf("plain --force over an encrypted archive: exit %d, stderr %q; want 2, naming --recipient", r.code, r.stderr)
	}
	if !bytes.Equal(must(os.ReadFile(archive)), sealed) {
		t.Error("a plain run replaced the encrypted archive")
	}
	// An encrypted run may replace it, and a plain run a plain zip.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--force", "--recipient", key.recipient, "-o", archive, "app"), exitComplete)
	plain := filepath.Join(dir, "plain.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", plain, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--force", "-o", plain, "app"), exitComplete)
}
