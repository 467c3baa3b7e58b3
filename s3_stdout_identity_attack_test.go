package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// appendStdoutEnv is appendStdout with env added to the command's environment (a set in a
// bucket's server).
func appendStdoutEnv(t *testing.T, dir string, env []string, path string, args ...string) (int, string, bool) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Stdout, cmd.Env = dir, f, append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	f.Close()
	after, _ := os.ReadFile(path)
	changed := !bytes.Equal(after, before)
	if changed {
		os.WriteFile(path, before, 0o600)
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), changed
}

// TestAttackS3StdoutIntoIdentity runs verify, list and restore of an encrypted set in a
// bucket with -i KEY and stdout appended (>>) to KEY. checkStdoutNotInput returned at once
// for an s3:// ARCHIVE, its identity files unchecked with the rest: each exited 0 and
// appended its report (verify --json, list's table, restore --json) to the secret key's
// file, which then no longer parsed for any later command, as 892af4d fixed for activate.
// Correct: exit 2 with one line, the key file as it was.
func TestAttackS3StdoutIntoIdentity(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--recipient", key.recipient, "-i", key.identity, "--output-dir", s.loc, "app"), exitComplete)
	for _, args := range [][]string{
		{"verify", "--json", "-i", key.identity, s.loc},
		{"list", "-i", key.identity, s.loc},
		{"restore", "--json", "-i", key.identity, s.loc, "dest"},
	} {
		code, stderr, changed := appendStdoutEnv(t, dir, s.env, key.identity, args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || changed {
			t.Errorf("%q >> the identity file: exit %d, stderr %q, changed %v; want 2, one line, unchanged", args, code, stderr, changed)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "verify", "-i", key.identity, s.loc), exitComplete)
}

// TestAttackS3StdoutIntoReceipt runs verify --receipt R of a set in a bucket with stdout
// appended (>>) to R, the local receipt it reads the archive against: checkStdoutNotInput
// returned at once for an s3:// ARCHIVE, and verify exited 0 with its --json report
// appended to R, a receipt that then no longer parsed. Correct: exit 2 with one line, R as
// it was.
func TestAttackS3StdoutIntoReceipt(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	receipt := filepath.Join(dir, "r.json")
	data, err := os.ReadFile(filepath.Join(s.dir, readLatest(t, s.dir)+".receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receipt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--json", "--receipt", receipt, s.loc}
	code, stderr, changed := appendStdoutEnv(t, dir, s.env, receipt, args...)
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || changed {
		t.Errorf("%q >> the receipt: exit %d, stderr %q, changed %v; want 2, one line, unchanged", args, code, stderr, changed)
	}
}
