package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// deepParts is a path below a source deeper than PATH_MAX (4096 bytes): 40 folders of 120
// bytes, then a file.
func deepParts() []string {
	parts := make([]string, 40)
	for i := range parts {
		parts[i] = strings.Repeat(string(rune('a'+i%26)), 120)
	}
	return append(parts, "deep.txt")
}

// makeDeep creates the folders of parts below root and writes content to the last, one
// component at a time relative to the folder above: no path to it fits in PATH_MAX.
func makeDeep(t *testing.T, root string, parts []string, content string) {
	t.Helper()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts[:len(parts)-1] {
		if err := unix.Mkdirat(fd, p, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	defer unix.Close(fd)
	f, err := unix.Openat(fd, parts[len(parts)-1], unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(f)
	if _, err := unix.Write(f, []byte(content)); err != nil {
		t.Fatal(err)
	}
}

// readDeep reads the file at parts below root, one component at a time.
func readDeep(t *testing.T, root string, parts []string) string {
	t.Helper()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fd = next
	}
	f, err := unix.Openat(fd, parts[len(parts)-1], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	file := os.NewFile(uintptr(f), "deep")
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCreateDeeperThanPathMax: a file whose path is longer than PATH_MAX is archived whole,
// and verify and restore handle its name.
func TestCreateDeeperThanPathMax(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	parts := deepParts()
	makeDeep(t, src, parts, "deep down\n")
	name := "app/" + strings.Join(parts, "/")
	if len(name) <= 4096 {
		t.Fatalf("the test path is only %d bytes long", len(name))
	}
	out := filepath.Join(dir, "b.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-o", out, "app"); r.code != exitComplete {
		t.Fatalf("create: exit %d, want %d; stderr:\n%s", r.code, exitComplete, r.stderr)
	}
	rc := readReceipt(t, out+".receipt.json")
	if rc.Status != "complete" || rc.Counts.Files != 1 || len(rc.Warnings) != 0 {
		t.Errorf("receipt: status %s, %d files, warnings %+v; want complete, 1 file, none", rc.Status, rc.Counts.Files, rc.Warnings)
	}
	if got := readZipGo(t, out)[name]; got != "deep down\n" {
		t.Errorf("the deep file in the archive holds %q, want %q", got, "deep down\n")
	}
	unzipTestLongNames(t, out)
	if r := backup(t, runOpts{dir: dir}, "verify", out); r.code != 0 {
		t.Errorf("verify: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	dest := filepath.Join(dir, "restored")
	if r := backup(t, runOpts{dir: dir}, "restore", out, dest); r.code != 0 {
		t.Fatalf("restore: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got := readDeep(t, filepath.Join(dest, "app"), parts); got != "deep down\n" {
		t.Errorf("the restored deep file holds %q, want %q", got, "deep down\n")
	}
}

// unzipTestLongNames runs unzip -t on an archive with names longer than Info-ZIP's own limit
// (4096 bytes): it tests every entry, warns that it truncates those names and exits 1. Any
// other complaint is damage.
func unzipTestLongNames(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command("unzip", "-tqq", path).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		t.Fatalf("unzip -t %s: %v\n%s", path, err, out)
	}
	for line := range strings.Lines(string(out)) {
		if line != "warning:  filename too long--truncating.\n" {
			t.Errorf("unzip -t: %q", line)
		}
	}
}
