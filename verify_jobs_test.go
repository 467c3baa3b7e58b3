package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
)

// jobsCase is an archive for TestVerifyJobsSameOutput: the arguments that name it (and its
// key), the exit code verify must give, and what its stderr must hold with --jobs 1, so
// that comparing the outputs of several --jobs means something.
type jobsCase struct {
	name string
	args []string
	code int
	want []string // in this order in the plain output's stderr
}

// TestVerifyJobsSameOutput: verify with one worker and with four says the same, byte for
// byte, in every output mode (lines, --json, --json-lines, -q), with the same exit code: on
// a good archive, on one with several damaged entries, on hostile ones (unsafe names, a
// manifest that disagrees with the entries, a directory after the manifest), on another
// tool's zip with bad CRC-32s and on an encrypted archive with damaged chunks.
func TestVerifyJobsSameOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []jobsCase{
		{name: "good", args: []string{jobsArchive(t, dir, "good")}, code: exitComplete},
		damagedJobsArchive(t, dir),
		hostileJobsArchive(t, dir),
		foreignJobsArchive(t, dir),
		sealedJobsArchive(t, dir),
	}
	modes := [][]string{nil, {"--json"}, {"--json-lines"}, {"-q"}}
	for _, c := range cases {
		for _, mode := range modes {
			t.Run(c.name+strings.Join(mode, ""), func(t *testing.T) {
				t.Parallel()
				var first result
				for _, jobs := range []string{"1", "4", "16"} {
					args := append(append([]string{"verify", "--jobs", jobs}, mode...), c.args...)
					r := backup(t, runOpts{dir: dir}, args...)
					r.stdout = withoutProgress(t, r.stdout)
					if jobs == "1" {
						first = r
						checkJobsCase(t, c, mode, r)
						continue
					}
					if r.code != first.code || r.stdout != first.stdout || r.stderr != first.stderr {
						t.Errorf("--jobs %s: exit %d\n%s%s\nwant, as --jobs 1: exit %d\n%s%s", jobs, r.code, r.stdout, r.stderr, first.code, first.stdout, first.stderr)
					}
				}
			})
		}
	}
}

// checkJobsCase checks what --jobs 1 said about the case c.
func checkJobsCase(t *testing.T, c jobsCase, mode []string, r result) {
	t.Helper()
	if r.code != c.code {
		t.Fatalf("--jobs 1: exit %d, want %d\n%s%s", r.code, c.code, r.stdout, r.stderr)
	}
	if mode != nil {
		return
	}
	rest := r.stderr
	for _, w := range c.want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("--jobs 1: stderr\n%s\nwant, in this order, %q (%q not found after those before it)", r.stderr, c.want, w)
		}
		rest = rest[i+len(w):]
	}
}

// withoutProgress drops --json-lines' progress events, which are sent every so often while
// the entries are read: how many there are depends on the time taken.
func withoutProgress(t *testing.T, stdout string) string {
	t.Helper()
	var kept []string
	for line := range strings.Lines(stdout) {
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "progress" {
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "")
}

// jobsTree lays out a tree at dir/name/app: files of every size, a large one first so that
// the workers finish out of archive order, a symlink and an empty folder.
func jobsTree(t *testing.T, dir, name string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(24, 3))
	nodes := map[string]node{"a/big.log": {content: strings.Repeat("a line of a large log file\n", 80000)},
		"link": {kind: "symlink", content: "d/f07"}, "empty": {kind: "dir"}}
	for i := range 60 {
		body := make([]byte, 1+rng.IntN(30000))
		for j := range body {
			body[j] = "abcdefgh\n"[rng.IntN(9)]
		}
		nodes[fmt.Sprintf("d/f%02d", i)] = node{content: string(body)}
	}
	src := filepath.Join(dir, name, "app")
	makeTree(t, src, nodes)
	return src
}

// jobsArchive backs up jobsTree to dir/NAME.zip (and its receipt) and returns its path.
func jobsArchive(t *testing.T, dir, name string) string {
	t.Helper()
	arch := filepath.Join(dir, name+".zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, jobsTree(t, dir, name)), exitComplete)
	return arch
}

// damagedJobsArchive flips a byte in the large file and in four small ones: each is a
// problem of its own, and the archive no longer matches its receipt.
func damagedJobsArchive(t *testing.T, dir string) jobsCase {
	arch := jobsArchive(t, dir, "damaged")
	c := jobsCase{name: "damaged", args: []string{arch}, code: exitFailed}
	for _, name := range []string{"app/a/big.log", "app/d/f03", "app/d/f04", "app/d/f31", "app/d/f59"} {
		flipInPlace(t, arch, name)
		c.want = append(c.want, name+": ")
	}
	c.want = append(c.want, "does not match the receipt", "backup verify: FAILED: 6 problems in ")
	return c
}

// hostileJobsArchive is an archive made to look like backup's, with unsafe names, entries
// the manifest does not list or lists otherwise, one it lists that is not there, a name
// stored twice and a directory entry after the manifest.
func hostileJobsArchive(t *testing.T, dir string) jobsCase {
	entries := []hostileEntry{{name: "ok/a", body: strings.Repeat("fine ", 5000)}, {name: "../evil", body: "x"},
		{name: "/abs", body: "y"}, {name: "ok/link", body: "..", symlink: true}, {name: "ok/link/through", body: "z"},
		{name: "ok/wrong-sum", body: "the manifest says otherwise"}, {name: "ok/unlisted", body: "not in the manifest"},
		{name: "ok/twice", body: "one"}, {name: "ok/twice", body: "two"}, {name: "ok/b", body: strings.Repeat("b", 70000)}}
	m := format.Manifest{Schema: format.ManifestSchema, ToolVersion: "x", Status: "complete", Files: []format.File{},
		Symlinks: []format.Symlink{}, Skipped: []format.Skipped{}, Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	for _, e := range entries {
		sum := sha256.Sum256([]byte(e.body))
		switch {
		case e.symlink:
			m.Symlinks = append(m.Symlinks, format.Symlink{Path: e.name, Target: e.body})
		case e.name == "ok/wrong-sum":
			m.Files = append(m.Files, format.File{Path: e.name, Size: int64(len(e.body)), SHA256: format.Digest(sha256.Sum256(nil))})
		case e.name != "ok/unlisted" && (e.name != "ok/twice" || e.body == "one"):
			m.Files = append(m.Files, format.File{Path: e.name, Size: int64(len(e.body)), SHA256: format.Digest(sum)})
		}
	}
	m.Files = append(m.Files, format.File{Path: "ok/gone", Size: 1, SHA256: format.Digest(sha256.Sum256([]byte("g")))})
	data, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "hostile.zip")
	writeHostileZip(t, arch, append(entries, hostileEntry{name: format.ManifestName, body: string(data)}, hostileEntry{name: "late/"}))
	return jobsCase{name: "hostile", args: []string{arch}, code: exitFailed, want: []string{
		"../evil: unsafe name", "/abs: unsafe name", "ok/link/through: unsafe name",
		"ok/wrong-sum: sha256 mismatch", "ok/unlisted: not in the manifest", "ok/twice: not in the manifest",
		"late/: directory entry after the manifest", "ok/gone: in the manifest but missing from the archive"}}
}

// foreignJobsArchive is another tool's zip (no manifest) with two entries damaged: only
// their CRC-32s can tell.
func foreignJobsArchive(t *testing.T, dir string) jobsCase {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("x/%02d", i)] = strings.Repeat(fmt.Sprintf("entry %d ", i), 100*(i+1))
	}
	arch := filepath.Join(dir, "foreign.zip")
	writeForeignZip(t, arch, files)
	for _, name := range []string{"x/07", "x/21"} {
		flipInPlace(t, arch, name)
	}
	return jobsCase{name: "foreign", args: []string{arch}, code: exitFailed, want: []string{"x/07: ", "x/21: ", "FAILED: 2 problems"}}
}

// sealedJobsArchive is an encrypted archive with a byte flipped in two of its chunks, read
// with its key: every entry with bytes in those chunks is a problem.
func sealedJobsArchive(t *testing.T, dir string) jobsCase {
	key := newAgeKey(t)
	os.Mkdir(filepath.Join(dir, "sealed"), 0o755)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "--recipient", key.recipient, "-o", "sealed/",
		jobsTree(t, dir, "sealed-src")), exitComplete)
	arch := onlyFile(t, filepath.Join(dir, "sealed"), ".zip.age")
	l := layout(t, arch, key)
	if l.chunks() < 6 {
		t.Fatalf("the archive has %d chunks; the test wants several", l.chunks())
	}
	damaged := bytes.Clone(l.file)
	for _, k := range []int{1, l.chunks() / 2} {
		damaged[l.payload+k*ageChunkEnc+100] ^= 0x20
	}
	if err := os.WriteFile(arch, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	return jobsCase{name: "sealed", args: []string{"-i", key.identity, arch}, code: exitFailed,
		want: []string{"failed to decrypt and authenticate chunk", "does not match the receipt"}}
}

// TestVerifyJobsUsage: --jobs outside 0 to 128 is a usage error, whose line names it (and a
// second says where the usage is).
func TestVerifyJobsUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	for _, jobs := range []string{"-1", "129", "many"} {
		r := backup(t, runOpts{dir: dir}, "verify", "--jobs", jobs, arch)
		line, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(line, "backup verify: ") || !strings.Contains(line, "--jobs") {
			t.Errorf("--jobs %s: exit %d, stdout %q, stderr %q; want %d and a line naming --jobs", jobs, r.code, r.stdout, r.stderr, exitUsage)
		}
	}
	for _, jobs := range []string{"0", "1", "128"} {
		if r := backup(t, runOpts{dir: dir}, "verify", "-j", jobs, arch); r.code != exitComplete {
			t.Errorf("-j %s: exit %d, stderr %q; want %d", jobs, r.code, r.stderr, exitComplete)
		}
	}
}

// TestVerifyInterruptedJobs: SIGINT while four workers read (strace holds each read of the
// archive from the third on) ends verify with 130 and one line, soon: no worker goes on
// reading the batches it holds.
func TestVerifyInterruptedJobs(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	arch := jobsArchive(t, dir, "held")
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-qq", "-o", log, "-P", arch, "-e", "trace=pread64",
		"-e", "inject=pread64:delay_enter=300000:when=3+", binary, "verify", "--jobs", "4", "--json", arch)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "pread64") && !returned(c) })
	start := time.Now()
	signalChild(t, cmd.Process.Pid, syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || stderr.String() != "backup verify: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want %d and one line saying interrupted", code, stderr.String(), exitInterrupted)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("verify took %v to stop after SIGINT", took)
	}
}
