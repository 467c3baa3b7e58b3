package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// sealedArchive backs up a small tree to key and returns the folder and the archive's path.
func sealedArchive(t *testing.T, key ageKey) (dir, archive string) {
	t.Helper()
	dir = t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	os.Mkdir(filepath.Join(dir, "out"), 0o755)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--recipient", key.recipient, "-o", "out/", "app"), exitComplete)
	return dir, onlyFile(t, filepath.Join(dir, "out"), ".zip.age")
}

// oneLine checks that stderr is one line holding want.
func oneLine(t *testing.T, r result, want string) {
	t.Helper()
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q: want one line with %q", r.stderr, want)
	}
}

// TestSealedNeedsIdentity: list and restore of an encrypted archive without --identity exit 2
// with one line naming --identity; with identities of which none matches, 1, with one line.
func TestSealedNeedsIdentity(t *testing.T) {
	t.Parallel()
	key, other := newAgeKey(t), newAgeKey(t)
	dir, archive := sealedArchive(t, key)
	for _, cmd := range [][]string{{"list", archive}, {"restore", archive, "dest"}} {
		r := backup(t, runOpts{dir: dir}, cmd...)
		mustExit(t, r, exitUsage)
		oneLine(t, r, "--identity")
		r = backup(t, runOpts{dir: dir}, append([]string{cmd[0], "-i", other.identity}, cmd[1:]...)...)
		mustExit(t, r, exitFailed)
		oneLine(t, r, "no identity matches: the archive is for 1 recipient")
	}
	r := backup(t, runOpts{dir: dir}, "verify", "-i", other.identity, archive)
	mustExit(t, r, exitFailed)
	oneLine(t, r, "no identity matches: the archive is for 1 recipient")
	if _, err := os.Lstat(filepath.Join(dir, "dest")); err == nil {
		t.Error("a restore that could not read the archive made DEST")
	}
	// Without a key, verify checks what it can, and says what it did not.
	r = backup(t, runOpts{dir: dir}, "verify", archive)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "ciphertext matches") || !strings.Contains(r.stdout, "contents not checked") {
		t.Errorf("verify without a key said %q", r.stdout)
	}
	os.WriteFile(archive+".receipt.json", []byte(strings.Replace(string(must(os.ReadFile(archive+".receipt.json"))), `"sha256": "`, `"sha256": "0`, 1)), 0o600)
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", archive), exitFailed)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSealedBadKeys: a bad recipient, an unreadable identity file, post-quantum mixed with
// classic keys: exit 2 before anything is written, and no key text on the screen.
func TestSealedBadKeys(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	secret := strings.TrimSpace(strings.Split(string(must(os.ReadFile(key.identity))), "\n")[1])
	fifo := filepath.Join(dir, "fifo")
	makeNode(t, fifo, node{kind: "fifo"})
	hybrid, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	pq := hybrid.Recipient().String()
	for _, args := range [][]string{
		{"--recipient", "age1nonsense"},
		{"--recipient", secret},
		{"--recipients-file", key.identity},
		{"--recipients-file", fifo},
		{"--recipients-file", filepath.Join(dir, "missing")},
		{"--recipient", key.recipient, "-i", filepath.Join(dir, "missing")},
		{"--recipient", key.recipient, "-i", fifo},
		{"--recipient", key.recipient, "-i", writeRecipients(t, key.recipient)},
		{"--recipient", key.recipient, "--recipient", pq},
	} {
		r := backup(t, runOpts{dir: dir}, append(append([]string{"create", "--output-dir", "set"}, args...), "app")...)
		if r.code != exitUsage {
			t.Errorf("create %q: exit %d, want 2; %s", args, r.code, r.stderr)
		}
		if args[len(args)-1] == pq && !strings.Contains(r.stderr, "post-quantum") {
			t.Errorf("create %q: %s; want the refusal to name post-quantum", args, r.stderr)
		}
		if strings.Contains(r.stderr, secret) || strings.Contains(r.stderr, secret[20:40]) {
			t.Errorf("create %q printed the secret key: %s", args, r.stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "set")); err == nil {
		t.Error("a refused run made the set")
	}
}

// TestSealedIdentityMode: an identity file group or others can read is used, after a
// warning line, as ssh does.
func TestSealedIdentityMode(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir, archive := sealedArchive(t, key)
	os.Chmod(key.identity, 0o644)
	r := backup(t, runOpts{dir: dir}, "list", "-i", key.identity, archive)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "warning: identity file "+key.identity+" can be read by group or others (mode 0644)") {
		t.Errorf("stderr %q: want the warning", r.stderr)
	}
}

// TestSealedRecipientsFileMode: a recipients file group or others can write is used, after a
// warning line: whoever can write it can add a key of their own.
func TestSealedRecipientsFileMode(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	file := filepath.Join(dir, "recipients")
	if err := os.WriteFile(file, []byte(key.recipient+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for mode, warned := range map[os.FileMode]bool{0o644: false, 0o664: true} {
		os.Chmod(file, mode)
		r := backup(t, runOpts{dir: dir}, "create", "-q", "--recipients-file", file, "-o", filepath.Join(dir, fmt.Sprintf("a%o.zip.age", mode)), "app")
		mustExit(t, r, exitComplete)
		if got := strings.Contains(r.stderr, fmt.Sprintf("warning: recipients file %s can be written by group or others (mode %04o)", file, mode)); got != warned {
			t.Errorf("mode %04o: stderr %q; want a warning: %v", mode, r.stderr, warned)
		}
	}
}
