package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestAttackSealedCiphertextLatestCopiedUninflated: a run of an encrypted set without an
// identity reads its archive back as ciphertext only (read_back "ciphertext": size, SHA-256,
// age header), so no run ever inflated its entries. The next run with -i copies them from
// that LATEST, and its read-back, which takes a set's LATEST for read back whole, did not
// inflate them either: an entry whose bytes are not those its CRC-32 and manifest record
// (what a fault of the writing host would leave, which a ciphertext read-back cannot see)
// went into a run whose receipt says complete, read_back "contents", and verify -i then
// failed it. The entries copied from a LATEST that was not read back whole are inflated, as
// those of a --reference are: the damage fails the run, and LATEST stays.
func TestAttackSealedCiphertextLatestCopiedUninflated(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha alpha alpha\n"}, "b.txt": {content: "beta\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", "set", "--recipient", key.recipient, "app"), exitComplete)
	first := sealedRuns(t, set)[0]
	if rc := readReceipt(t, filepath.Join(set, first+".receipt.json")); rc.Encryption.ReadBack != format.ReadBackCiphertext {
		t.Fatalf("first run read back %q, want ciphertext", rc.Encryption.ReadBack)
	}
	// The first run's archive as a fault of its host would have left it: one byte of
	// app/a.txt's stored data changed, its receipt the SHA-256 of that file.
	path := filepath.Join(set, first)
	reseal(t, key, path, func(plain string) { flipEntryByte(t, plain, "app/a.txt") })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	receiptPath := path + ".receipt.json"
	raw, err := os.ReadFile(receiptPath)
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(raw, &rc); err != nil {
		t.Fatal(err)
	}
	rc["archive"].(map[string]any)["sha256"] = hex.EncodeToString(sum[:])
	if raw, err = json.Marshal(rc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receiptPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "set"), exitComplete) // what a host without the key sees

	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", "set", "--recipient", key.recipient, "-i", key.identity, "app")
	runs := sealedRuns(t, set)
	if r.code == exitComplete {
		second := readReceipt(t, filepath.Join(set, runs[len(runs)-1]+".receipt.json"))
		v := backup(t, runOpts{dir: dir}, "verify", "-i", key.identity, "set")
		t.Fatalf("the run copied from a LATEST never inflated: exit 0, reused %d, read_back %q; verify -i of it: exit %d, %s",
			second.Counts.Reused, second.Encryption.ReadBack, v.code, v.stderr)
	}
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "app/a.txt") || !strings.Contains(r.stderr, "LATEST not moved") {
		t.Errorf("stderr:\n%s\nwant the damaged app/a.txt named, and LATEST not moved", r.stderr)
	}
	if got := readLatest(t, set); got != first {
		t.Errorf("LATEST %q, want %q as it was", got, first)
	}
}
