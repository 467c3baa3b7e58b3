package main

import (
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// leftovers lists the files in dir other than want, so that a test can assert that a
// failed run left no temp file behind.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range entries {
		if !slices.Contains(want, e.Name()) {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

func TestCreateOutputExists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "new\n"}})
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{"app.zip": {content: "old archive"}, "app.zip.receipt.json": {content: "old receipt"}})
	archive := filepath.Join(out, "app.zip")

	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	if r.code != exitFailed || !strings.Contains(r.stderr, archive+" exists (use --force") {
		t.Fatalf("exit %d, stderr %q; want %d and a message naming the output", r.code, r.stderr, exitFailed)
	}
	assertContent(t, archive, "old archive")
	assertContent(t, archive+".receipt.json", "old receipt")
	if extra := leftovers(t, out, "app.zip", "app.zip.receipt.json"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}

	r = backup(t, runOpts{dir: dir}, "create", "--force", "-o", archive, "app")
	if r.code != exitComplete {
		t.Fatalf("--force: exit %d, stderr %s", r.code, r.stderr)
	}
	if got := readZip(t, archive)["app/a"]; got != "new\n" {
		t.Errorf("after --force app/a = %q, want the new content", got)
	}
}

func TestCreateSourceMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := backup(t, runOpts{dir: dir}, "create", "-o", "out.zip", "nowhere")
	want := "backup: failed: source " + filepath.Join(dir, "nowhere") + ": no such file or directory\n"
	if r.code != exitFailed || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want %d, %q", r.code, r.stderr, exitFailed, want)
	}
	if exists(filepath.Join(dir, "out.zip")) {
		t.Error("an archive was written")
	}
	rc := readReceipt(t, filepath.Join(dir, "out.zip.receipt.json"))
	if rc.Status != "failed" || rc.Archive != nil || !strings.Contains(rc.Error, "no such file") {
		t.Errorf("receipt: status %q, archive %v, error %q; want failed, null, the cause", rc.Status, rc.Archive, rc.Error)
	}
}

// TestCreateDiskFull writes to a tmpfs too small for the archive: the run fails, the old
// archive stays as it was and no temp file is left.
func TestCreateDiskFull(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "small")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, out, "256k")
	makeTree(t, out, map[string]node{"app.zip": {content: "old archive"}})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: randomString(t, 1<<20)}})

	archive := filepath.Join(out, "app.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--force", "-o", archive, "app")
	if r.code != exitFailed || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("exit %d, stderr %q; want %d and ENOSPC", r.code, r.stderr, exitFailed)
	}
	assertContent(t, archive, "old archive")
	if extra := leftovers(t, out, "app.zip"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
}

// TestCreateInterrupted sends SIGINT while the archive is being written: exit 130, no
// archive at the final path, no temp file.
func TestCreateInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := startSlowRun(t, dir)
	out := filepath.Join(dir, "out")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	if extra := leftovers(t, out, "app.zip.receipt.json"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
	if rc := readReceipt(t, filepath.Join(out, "app.zip.receipt.json")); rc.Status != "failed" || rc.Error != "interrupted" {
		t.Errorf("receipt status %q error %q, want failed, interrupted", rc.Status, rc.Error)
	}
}

// TestCreateAfterKilledRun: a run killed with SIGKILL leaves its temp file, which must not
// disturb the next run.
func TestCreateAfterKilledRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := startSlowRun(t, dir)
	out := filepath.Join(dir, "out")
	cmd.Process.Kill()
	cmd.Wait()
	if exists(filepath.Join(out, "app.zip")) {
		t.Fatal("a killed run left an archive at the final path")
	}
	r := backup(t, runOpts{dir: dir}, "create", "--level", "1", "-o", filepath.Join(out, "app.zip"), "app")
	if r.code != exitComplete {
		t.Fatalf("next run: exit %d, stderr %s", r.code, r.stderr)
	}
	readZip(t, filepath.Join(out, "app.zip"))
}

// startSlowRun starts a backup of 64 MiB of random hex at level 9 on one worker into
// dir/out/app.zip, and returns once the run has created its temp file.
func startSlowRun(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	return startSlowRunUnder(t, dir)
}

// startSlowRunUnder is startSlowRun with the binary run by the command wrapper (nohup),
// which execs it: the process is backup's.
func startSlowRunUnder(t *testing.T, dir string, wrapper ...string) *exec.Cmd {
	t.Helper()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: slowString(t, 64<<20)}})
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{".": {kind: "dir"}})
	args := append(wrapper, binary, "create", "--level", "9", "-j", "1", "-o", filepath.Join(out, "app.zip"), "app")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitForTemp(t, out)
	return cmd
}

func waitForTemp(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if temps, _ := filepath.Glob(filepath.Join(dir, ".app.zip.tmp-*")); len(temps) > 0 {
			return
		}
	}
	t.Fatal("the run never created its temp file")
}

func randomString(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s: %q, %v; want %q", path, got, err, want)
	}
}

// TestCreateOneFileSystem mounts a tmpfs inside the source: with --one-file-system the
// mount point is excluded and not descended; without it, it is archived.
func TestCreateOneFileSystem(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a"}, "mnt": {kind: "dir"}})
	mnt := filepath.Join(dir, "app", "mnt")
	mountTmpfs(t, mnt, "64k")
	makeTree(t, mnt, map[string]node{"other": {content: "on another file system"}})

	r := backup(t, runOpts{dir: dir}, "create", "--one-file-system", "-o", "one.zip", "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rc := readReceipt(t, filepath.Join(dir, "one.zip.receipt.json"))
	if len(rc.Excluded) != 1 || rc.Excluded[0].Path != "app/mnt" || rc.Excluded[0].Rule != "one-file-system" {
		t.Errorf("excluded %+v, want app/mnt by one-file-system", rc.Excluded)
	}
	if _, ok := readZip(t, filepath.Join(dir, "one.zip"))["app/mnt/other"]; ok {
		t.Error("crossed into the other file system")
	}
	backup(t, runOpts{dir: dir}, "create", "-o", "all.zip", "app")
	if _, ok := readZip(t, filepath.Join(dir, "all.zip"))["app/mnt/other"]; !ok {
		t.Error("without --one-file-system the mount's content is missing")
	}
}
