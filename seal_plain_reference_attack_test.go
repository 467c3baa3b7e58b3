package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestAttackPlainZipAsSealedReference: whoever can write an encrypted set's folder puts a
// plain zip at the name of LATEST's archive (…Z.zip.age) and gives its receipt that file's
// size and SHA-256. A host with no key (the write-only host, whose every run is a full run:
// it cannot read its set) copied the unchanged files' entries from that zip, which no one
// but the writer vouches for ("2 reused"), and its read-back, of the ciphertext alone,
// never inflated them; a host with a key did the same. Its name says encrypted, and every
// archive of an encrypted set is: a reference whose bytes are not of the kind its name says
// is not one. Now each run reads every file, and says why in one line, under -q too: a
// backup was replaced, and nothing else would say so (verify without a key reads the zip).
func TestAttackPlainZipAsSealedReference(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha alpha\n"}, "b.txt": {content: "beta\n"}})
	set := filepath.Join(dir, "set")
	create := func(keyArgs ...string) result {
		args := append([]string{"create", "--output-dir", "set", "--recipient", key.recipient}, keyArgs...)
		return backup(t, runOpts{dir: dir}, append(args, "app")...)
	}
	mustExit(t, create(), exitComplete)
	for _, keyArgs := range [][]string{nil, {"-i", key.identity}, {"-q"}} {
		forgePlainLatest(t, key, set)
		r := create(keyArgs...)
		mustExit(t, r, exitComplete)
		rc := readReceipt(t, filepath.Join(set, readLatest(t, set)+".receipt.json"))
		if rc.Counts.Reused != 0 {
			t.Errorf("%q: %d entries copied from a plain zip named as an encrypted archive; want none", keyArgs, rc.Counts.Reused)
		}
		if !strings.Contains(r.stderr, "reading every file: no unchanged entry is copied: ") || !strings.Contains(r.stderr, "plain zip") {
			t.Errorf("%q: stderr %q; want the line that says why every file is read", keyArgs, r.stderr)
		}
	}
}

// forgePlainLatest replaces the archive LATEST names in set with the zip it holds, in clear,
// and its receipt's size and SHA-256 with that file's.
func forgePlainLatest(t *testing.T, key ageKey, set string) {
	t.Helper()
	path := filepath.Join(set, readLatest(t, set))
	ids, err := age.ParseIdentities(bytes.NewReader(must(os.ReadFile(key.identity))))
	if err != nil {
		t.Fatal(err)
	}
	r, err := age.Decrypt(bytes.NewReader(must(os.ReadFile(path))), ids...)
	if err != nil {
		t.Fatal(err)
	}
	plain := must(io.ReadAll(r))
	if err := os.WriteFile(path, plain, 0o600); err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(must(os.ReadFile(path+".receipt.json")), &rc); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(plain)
	rc["archive"].(map[string]any)["sha256"] = hex.EncodeToString(sum[:])
	rc["archive"].(map[string]any)["size"] = len(plain)
	if err := os.WriteFile(path+".receipt.json", must(json.Marshal(rc)), 0o600); err != nil {
		t.Fatal(err)
	}
}
