package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"filippo.io/age"

	"backup/format"
)

// The adversarial pass over encryption (docs/attacks.md): what an attacker who can write the
// set, or who interrupts or starves a run, can make of an encrypted backup.

// TestSealedRecipientsNotFromSet: recipients come only from the host. A LATEST receipt edited
// to name an attacker's key changes nothing the next run encrypts to: the new archive opens
// with the run's key and not with the attacker's.
func TestSealedRecipientsNotFromSet(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	attacker, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", "set", "--recipient", key.recipient, "app"), exitComplete)
	receipt := filepath.Join(set, readLatest(t, set)+".receipt.json")
	var rc map[string]any
	json.Unmarshal(must(os.ReadFile(receipt)), &rc)
	rc["encryption"].(map[string]any)["recipients"] = []string{attacker.Recipient().String()}
	os.WriteFile(receipt, must(json.Marshal(rc)), 0o600)

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b.txt": {content: "beta\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", "set", "--recipient", key.recipient, "app")
	mustExit(t, r, exitComplete)
	data := must(os.ReadFile(filepath.Join(set, readLatest(t, set))))
	if _, err := age.Decrypt(bytes.NewReader(data), attacker); err == nil {
		t.Fatal("the new archive opens with the key the attacker put in the set's receipt")
	}
	ids, _ := age.ParseIdentities(bytes.NewReader(must(os.ReadFile(key.identity))))
	if _, err := age.Decrypt(bytes.NewReader(data), ids...); err != nil {
		t.Errorf("the new archive does not open with the run's key: %v", err)
	}
}

// TestSealedInterrupted: SIGINT while an encrypted archive is written: exit 130, nothing at
// the final path, no temp file beside it, and no plaintext spool left in $TMPDIR.
func TestSealedInterrupted(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: slowString(t, 64<<20)}, "small": {content: "s"}})
	makeTree(t, tmp, map[string]node{".": {kind: "dir"}})
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{".": {kind: "dir"}})
	final := filepath.Join(out, "app.zip.age")
	cmd := exec.Command(binary, "create", "--level", "9", "-j", "1", "--recipient", key.recipient, "-o", final, "app")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitForGlob(t, filepath.Join(out, ".app.zip.age.tmp-*"))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d (%v), want 130", code, err)
	}
	if extra := leftovers(t, out, "app.zip.age.receipt.json"); len(extra) > 0 {
		t.Errorf("the output folder holds %q after the interrupt", extra)
	}
	if rc := readReceipt(t, final+".receipt.json"); rc.Status != format.Failed || rc.Error != format.ErrorInterrupted || rc.Schema != format.SealedReceiptSchema {
		t.Errorf("receipt %s, %s %q; want v2, failed, interrupted", rc.Schema, rc.Status, rc.Error)
	}
	if extra := leftovers(t, tmp); len(extra) > 0 {
		t.Errorf("$TMPDIR holds %q after the interrupt", extra)
	}
}

func waitForGlob(t *testing.T, pattern string) {
	t.Helper()
	for range 6000 {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 5e6}, nil)
	}
	t.Fatalf("nothing matched %s", pattern)
}

// TestSealedDiskFull: an encrypted run into a set on a full disk fails (exit 1), leaves
// LATEST and the previous archive as they were and no temp file; the next run with room
// recovers without help.
func TestSealedDiskFull(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, set, map[string]node{".": {kind: "dir"}})
	mountTmpfs(t, set, "256k")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	run := func() result {
		return backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--recipient", key.recipient, "app")
	}
	mustExit(t, run(), exitComplete)
	good := readLatest(t, set)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: randomString(t, 1<<20)}})
	r := run()
	mustExit(t, r, exitFailed)
	if readLatest(t, set) != good {
		t.Errorf("LATEST moved to %s", readLatest(t, set))
	}
	for _, name := range listDir(t, set) {
		if strings.Contains(name, ".tmp-") {
			t.Errorf("left in the set: %s", name)
		}
	}
	os.Remove(filepath.Join(dir, "app", "random"))
	mustExit(t, run(), exitComplete)
}

// TestSealedS3ReadBackDiffers: a server that returns other bytes than were uploaded fails the
// read-back of a run without keys (its ciphertext's SHA-256 is checked): LATEST stays, the
// run's receipt says failed, and names no path.
func TestSealedS3ReadBackDiffers(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "zq7x9kw-app"), map[string]node{"zq7x9kw-a": {content: "first\n"}})
	create := func(extra ...string) result {
		args := append([]string{"create", "--output-dir", s.loc, "--recipient", key.recipient}, extra...)
		return backup(t, runOpts{dir: dir, env: s.env}, append(args, "zq7x9kw-app")...)
	}
	mustExit(t, create(), exitComplete)
	good := readLatest(t, s.dir)
	proxy, _ := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
		if kind == "ranged read" {
			return corruptGet
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "zq7x9kw-app"), map[string]node{"random": {content: randomString(t, 4<<20)}})
	mustExit(t, create("--s3-endpoint", proxy), exitFailed)
	if readLatest(t, s.dir) != good {
		t.Errorf("LATEST moved to %s", readLatest(t, s.dir))
	}
	runs := sealedRuns(t, s.dir)
	rc := readReceipt(t, filepath.Join(s.dir, runs[len(runs)-1]+".receipt.json"))
	if rc.Status != format.Failed || rc.Error != format.SealedError {
		t.Errorf("the failed run's receipt: %s %q", rc.Status, rc.Error)
	}
	if found := revealed(t, s.dir, []string{"zq7x9kw"}); len(found) > 0 {
		t.Errorf("the set reveals: %q", found)
	}
}
