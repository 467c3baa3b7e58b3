package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackPlainZipAsSealedLatestRead: whoever can write an encrypted set's folder puts a
// plain zip at the name of LATEST's archive (…Z.zip.age), with its receipt given that
// file's size and SHA-256 and still recording an encrypted archive (its "encryption"). A
// run no longer copies from it (TestAttackPlainZipAsSealedReference), but verify, with a key
// or without, said ok and "matches" the receipt; restore restored it, without a key too, on
// the write-only host where an encrypted set's restore asks for one; list listed it; activate -i made it LATEST. The
// receipt says the archive is an age file: one that is not is not the archive the run
// wrote. Each now fails (exit 1), and restore writes nothing.
func TestAttackPlainZipAsSealedLatestRead(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	set := filepath.Join(dir, "set")
	run := func() {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "--recipient", key.recipient, "app"), exitComplete)
	}
	run()
	forgePlainLatest(t, key, set)
	forged := readLatest(t, set)
	run()
	good := readLatest(t, set)
	r := backup(t, runOpts{dir: dir}, "activate", "-i", key.identity, "set", forged)
	if r.code != exitFailed || readLatest(t, set) != good {
		t.Errorf("activate of the plain zip: exit %d, LATEST %s; want 1, LATEST %s; %s", r.code, readLatest(t, set), good, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte(forged+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(set, forged)
	for _, args := range [][]string{
		{"verify", "set"},
		{"verify", "-i", key.identity, "set"},
		{"verify", named},
		{"verify", "-i", key.identity, named},
		{"list", "set"},
		{"list", "-i", key.identity, "set"},
		{"restore", "set", "dest"},
		{"restore", "-i", key.identity, "set", "dest"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "not an age file") {
			t.Errorf("%q: exit %d, stderr %q; want 1, saying it is not an age file", args, r.code, r.stderr)
		}
		if _, err := os.Lstat(filepath.Join(dir, "dest")); err == nil {
			t.Fatalf("%q restored a plain zip put in place of an encrypted archive", args)
		}
	}
}
