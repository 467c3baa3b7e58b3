package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backup/format"
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

// TestCreateStdoutIsAnOutput: stdout redirected into a file (> F) is an output like the
// others. Once, -o - --receipt F > F streamed the archive into F, then replaced it with the
// receipt, which said complete: the archive was gone. Exit 2 now, nothing written; the same
// for --json into the archive's file, and for a SOURCE file.
func TestCreateStdoutIsAnOutput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, file string
		args       []string
		want       string
	}{
		{"receipt", "F", []string{"-o", "-", "--receipt", "F", "app"}, "--receipt F is also stdout (the archive, -o -)"},
		{"receipt-symlink", "F", []string{"-o", "-", "--receipt", "lnk", "app"}, "--receipt lnk is also stdout (the archive, -o -)"},
		{"metrics", "m.prom", []string{"-o", "-", "--receipt", "r.json", "--metrics-file", "m.prom", "app"}, "--metrics-file m.prom is also stdout (the archive, -o -)"},
		{"source", "f.txt", []string{"-o", "-", "--receipt", "r.json", "f.txt"}, "stdout (the archive, -o -) is also SOURCE "},
		{"json", "a.zip", []string{"--json", "--force", "-o", "a.zip", "app"}, "stdout (--json) is also the archive (-o a.zip)"},
		{"json-lines", "a.zip.receipt.json", []string{"--json-lines", "-o", "a.zip", "app"}, "stdout (--json-lines) is also the receipt a.zip.receipt.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}})
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("a file SOURCE\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("F", filepath.Join(dir, "lnk")); err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(filepath.Join(dir, c.file)) // what the shell's > does
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			cmd := exec.Command(binary, append([]string{"create"}, c.args...)...)
			cmd.Dir, cmd.Stdout = dir, out
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.HasPrefix(stderr.String(), "backup create: "+c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, c.want)
			}
			if info, err := out.Stat(); err != nil || info.Size() != 0 {
				t.Errorf("%s was written to: %v", c.file, err)
			}
			want := []string{"app", "f.txt", "lnk"}
			if !slices.Contains(want, c.file) {
				want = append(want, c.file)
			}
			slices.Sort(want)
			if got := listDir(t, dir); !slices.Equal(got, want) {
				t.Errorf("files after the run: %q, want %q", got, want)
			}
		})
	}
}

// TestCreatePrintedIntoSourceLeftOut: what the run prints (--json, --json-lines), redirected
// into a file inside the SOURCE, is the run's output as its receipt is, and is left out of the
// archive (rule self). Once it was archived as the run found it: empty, or the first event.
func TestCreatePrintedIntoSourceLeftOut(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--json", "--json-lines"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}})
			out, err := os.Create(filepath.Join(dir, "app", "printed"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			cmd := exec.Command(binary, "create", flag, "-o", "x.zip", "app")
			cmd.Dir, cmd.Stdout = dir, out
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("create %s: %v, %s", flag, err, stderr.String())
			}
			if _, ok := readZip(t, filepath.Join(dir, "x.zip"))["app/printed"]; ok {
				t.Errorf("what %s printed into the SOURCE was archived", flag)
			}
			rc := readReceipt(t, filepath.Join(dir, "x.zip.receipt.json"))
			want := []format.Excluded{{Path: "app/printed", Rule: "self"}}
			if rc.Status != "complete" || !slices.Equal(rc.Excluded, want) {
				t.Errorf("receipt %s, excluded %+v; want complete, %+v", rc.Status, rc.Excluded, want)
			}
		})
	}
}
