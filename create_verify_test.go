package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCreateVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a"}, "b/c": {content: "c"}})
	out := filepath.Join(dir, "a.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--verify", "-o", out, "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	readZip(t, out)
	if r := backup(t, runOpts{dir: dir}, "verify", out); r.code != exitComplete {
		t.Errorf("verify after create --verify: exit %d %s", r.code, r.stderr)
	}
}

// TestCreateVerifyCatchesDamage damages the temp archive between Close and the read-back,
// as a bad disk or a bug would: the run fails, and nothing is at the final path.
func TestCreateVerifyCatchesDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: strings.Repeat("abc", 1000)}})
	out := filepath.Join(dir, "a.zip")
	beforeVerify = func(temp string) { flipInPlace(t, temp, "app/a") }
	t.Cleanup(func() { beforeVerify = func(string) {} })
	var stdout, stderr bytes.Buffer
	code := run([]string{"create", "--verify", "-o", out, filepath.Join(dir, "app")}, &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitFailed, stderr.String())
	}
	want := "backup: failed: verifying archive " + out + ": app/a: "
	if !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to start %q", stderr.String(), want)
	}
	if got := leftovers(t, dir, "app"); !slices.Equal(got, []string{"a.zip.receipt.json"}) {
		t.Errorf("left in the output folder: %q, want only the failed receipt", got)
	}
	if rc := readReceipt(t, out+".receipt.json"); rc.Status != "failed" || rc.Archive != nil {
		t.Errorf("receipt status %q archive %v, want failed and null", rc.Status, rc.Archive)
	}
}

// flipInPlace flips a byte in the middle of the named entry's data in the archive at path.
func flipInPlace(t *testing.T, path, name string) {
	t.Helper()
	data := readFile(t, path)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Error(err)
		return
	}
	for _, f := range zr.File {
		if f.Name == name {
			off, _ := f.DataOffset()
			data[off+int64(f.CompressedSize64)/2] ^= 0x01
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Error(err)
	}
}
