package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateToStdout streams the archive to stdout (-o -): the bytes are a whole zip that
// unzip -t and verify accept, and the receipt at --receipt records their size and SHA-256.
// Redirected into a file inside the SOURCE, the archive does not back itself up.
func TestCreateToStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}, "big": {content: randomString(t, 3<<20)}})
	out, err := os.Create(filepath.Join(dir, "app", "self.zip"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "create", "-o", "-", "--receipt", "r.json", "app")
	cmd.Dir, cmd.Stdout = dir, out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("create -o -: %v, %s", err, stderr.String())
	}
	out.Close()
	path := out.Name()
	entries := readZip(t, path)
	if _, ok := entries["app/self.zip"]; ok {
		t.Error("the archive on stdout, redirected into the SOURCE, backed itself up")
	}
	if entries["app/a.txt"] != "hello\n" {
		t.Errorf("app/a.txt = %q", entries["app/a.txt"])
	}
	data, _ := os.ReadFile(path)
	sum := sha256.Sum256(data)
	rc := readReceipt(t, filepath.Join(dir, "r.json"))
	if rc.Status != "complete" || rc.Archive == nil || rc.Archive.Path != "-" || rc.Archive.Size != int64(len(data)) || rc.Archive.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("receipt %s %+v; want complete, path -, %d bytes, SHA-256 %x", rc.Status, rc.Archive, len(data), sum)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "--receipt", "r.json", path), exitComplete)
}

// TestCreateToClosedPipe: a reader that goes away fails the run (exit 1) with a failed
// receipt, instead of SIGPIPE killing it before it can write one.
func TestCreateToClosedPipe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"big": {content: randomString(t, 8<<20)}})
	cmd := exec.Command(binary, "create", "--level", "0", "-o", "-", "--receipt", "r.json", "app")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Read(make([]byte, 10))
	stdout.Close()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("exit %d, stderr %q; want %d and the broken pipe named", code, stderr.String(), exitFailed)
	}
	if rc := readReceipt(t, filepath.Join(dir, "r.json")); rc.Status != "failed" || rc.Archive != nil {
		t.Errorf("receipt %s, archive %+v; want failed, no archive", rc.Status, rc.Archive)
	}
}
