package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// editReceipt rewrites the receipt at path through edit, as someone with a text editor
// would: the archive it describes is not touched.
func editReceipt(t *testing.T, path string, edit func(rc map[string]any)) {
	t.Helper()
	var rc map[string]any
	if err := json.Unmarshal(readFile(t, path), &rc); err != nil {
		t.Fatal(err)
	}
	edit(rc)
	data, err := json.MarshalIndent(rc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAdoptArchiveSwappedForFIFO: ARCHIVE is checked, then swapped for a FIFO while adopt
// waits for the set's lock. adopt copies what it checked, from the descriptor it checked, and
// never opens the FIFO (which would hang it, holding the lock, for ever).
func TestAdoptArchiveSwappedForFIFO(t *testing.T) {
	t.Parallel()
	_, set, _, elsewhere := adoptSet(t)
	original := readFile(t, elsewhere)
	held, err := os.OpenFile(filepath.Join(set, ".backup.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "adopt", "--wait", "60s", set, elsewhere)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	// Waiting on the lock means ARCHIVE was checked: the lock is taken after the check.
	waitFor(t, "adopt to wait for the lock", func() bool { return holdsOpen(cmd.Process.Pid, filepath.Join(set, ".backup.lock")) })
	if err := os.Remove(elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(elsewhere, 0o644); err != nil {
		t.Fatal(err)
	}
	held.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("adopt hung on the FIFO put at ARCHIVE after it was checked; stderr %q", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("adopt: exit %d, stderr %q; want it to adopt the bytes it checked", code, stderr.String())
	}
	archives := setArchives(t, set)
	if len(archives) != 4 || !bytes.Equal(readFile(t, filepath.Join(set, archives[2])), original) {
		t.Errorf("the set holds %v; want the adopted copy, byte for byte the archive checked", archives)
	}
}

// holdsOpen says whether process pid has path open.
func holdsOpen(pid int, path string) bool {
	fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "fd", "*"))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestAdoptIncompleteActivate: adopt --activate of an incomplete backup is refused before
// anything is copied (exit 1, the set as it was); with --allow-incomplete it is adopted and
// activated.
func TestAdoptIncompleteActivate(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	as := runOpts{dir: dir, uid: nobody}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"ok.txt": {content: "ok\n"}, "secret": {content: "s\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, as, "create", "--output-dir", set, "app"), exitComplete)
	first := readLatest(t, set)
	if err := os.Chmod(filepath.Join(dir, "app", "secret"), 0o200); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "app.zip")
	mustExit(t, backup(t, as, "create", "-o", elsewhere, "app"), exitIncomplete)

	before := statDir(t, set)
	r := backup(t, runOpts{}, "adopt", "--activate", set, elsewhere)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "incomplete") || !strings.Contains(r.stderr, "--allow-incomplete") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line saying the backup is incomplete and naming --allow-incomplete", r.stderr)
	}
	if after := statDir(t, set); after != before {
		t.Errorf("the refused adopt --activate changed the set:\n%s\nwant\n%s", after, before)
	}
	if got := readLatest(t, set); got != first {
		t.Errorf("LATEST names %q, want %q", got, first)
	}

	r = backup(t, runOpts{}, "adopt", "--activate", "--allow-incomplete", set, elsewhere)
	mustExit(t, r, exitComplete)
	if archives := setArchives(t, set); len(archives) != 4 || readLatest(t, set) != archives[2] {
		t.Errorf("the set holds %v, LATEST %q; want the incomplete backup adopted and LATEST", archives, readLatest(t, set))
	}
}

// TestAdoptSourceNames: adopt refuses (exit 1, nothing written) a receipt whose source's
// name cannot name a set's archives (`/x/..` would give `..-TIME.zip`, `a..b` one LATEST
// cannot hold), and a receipt whose source is not what the archive's entries hold.
func TestAdoptSourceNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		source string
		want   string
	}{
		{"dotdot", "/x/..", `".." cannot name a set's archives`},
		{"dot", "/x/.", `"." cannot name a set's archives`},
		{"dots inside", "/srv/a..b", `"a..b" cannot name a set's archives`},
		{"newline", "/srv/a\nb", `"a\nb" cannot name a set's archives`},
		{"not what the archive holds", "/srv/db", `the archive's entries are under "app", its receipt names "db"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, _, _, elsewhere := adoptSet(t)
			editReceipt(t, elsewhere+".receipt.json", func(rc map[string]any) { rc["sources"] = []string{tt.source} })
			set := filepath.Join(dir, "empty-set")
			r := backup(t, runOpts{}, "adopt", set, elsewhere)
			mustExit(t, r, exitFailed)
			if !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", r.stderr, tt.want)
			}
			if _, err := os.Lstat(set); err == nil {
				t.Errorf("the refused adopt made the set: %v", listDir(t, set))
			}
		})
	}
}

// TestCreateSetSourceName: a SOURCE whose name cannot name a set's archives is refused up
// front (exit 2, nothing written), not backed up into an archive LATEST can never name.
func TestCreateSetSourceName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "a..b"), map[string]node{"f": {content: "f\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", "set", "a..b")
	mustExit(t, r, exitUsage)
	if !strings.Contains(r.stderr, `"a..b" cannot name a set's archives`) {
		t.Errorf("stderr %q", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "set")); err == nil {
		t.Errorf("the refused create made the set: %v", listDir(t, filepath.Join(dir, "set")))
	}
	// Outside a set the name is no problem.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "ab.zip", "a..b"), exitComplete)
}

// TestAdoptDiskFull adopts into a set on a tmpfs with room for the receipt but not the
// archive: adopt fails (exit 1) and takes its receipt back out, so the set is as it was (no
// receipt left without its archive, which would make an empty set look like one that lost
// its LATEST); no temp file is left either.
func TestAdoptDiskFull(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r": {content: randomString(t, 20000)}})
	elsewhere := filepath.Join(dir, "app.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--level", "0", "-o", elsewhere, "app"), exitComplete)
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, set, "8k")
	r := backup(t, runOpts{}, "adopt", set, elsewhere)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("stderr %q, want the cause", r.stderr)
	}
	if got := leftovers(t, set, ".backup.lock"); len(got) != 0 {
		t.Errorf("the failed adopt left %v in the set", got)
	}
	r = backup(t, runOpts{}, "status", set)
	if !strings.Contains(r.stderr, "no backup in "+set+" yet") {
		t.Errorf("status after the failed adopt: %q, want an empty set", r.stderr)
	}
}

// TestAdoptInterrupted interrupts adopt (SIGINT) while it copies the archive into the set
// (each fsync held by strace): it stops (exit 130) instead of finishing the copy it was told
// to abandon, and takes its receipt back: the set is as it was, with no temp file.
func TestAdoptInterrupted(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	_, set, _, elsewhere := adoptSet(t)
	before := statDir(t, set)
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=fsync",
		"-e", "inject=fsync:delay_enter=1000000", binary, "adopt", set, elsewhere)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitFor(t, "the copy's temp file", func() bool {
		temps, _ := filepath.Glob(filepath.Join(set, ".app-*.zip.tmp-*"))
		return len(temps) > 0
	})
	pid := tracee(t, cmd.Process.Pid)
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, stderr %q; want %d", code, stderr.String(), exitInterrupted)
	}
	if after := statDir(t, set); after != before {
		t.Errorf("the interrupted adopt changed the set:\n%s\nwant\n%s", after, before)
	}
}

// tracee returns the pid of the process strace (pid) runs.
func tracee(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.Fields(string(data))[0])
	if err != nil {
		t.Fatal(err)
	}
	return child
}

// TestAdoptAlreadyButDamaged: the set holds a copy of ARCHIVE by its receipt's SHA-256, but
// that copy has rotted (a byte changed, same size). adopt must not say "already in the
// set", which tells the user the copy they hold can go: it refuses (exit 1), names the
// set's copy and the cause, and changes nothing.
func TestAdoptAlreadyButDamaged(t *testing.T) {
	t.Parallel()
	_, set, _, elsewhere := adoptSet(t)
	r := backup(t, runOpts{}, "adopt", "--json", set, elsewhere)
	mustExit(t, r, exitComplete)
	var out struct {
		Archive string `json:"archive"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(set, out.Archive)
	data := readFile(t, copyPath)
	data[len(data)/2] ^= 0x55
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	before := statDir(t, set)

	r = backup(t, runOpts{}, "adopt", set, elsewhere)
	mustExit(t, r, exitFailed)
	if strings.Contains(r.stdout+r.stderr, "already in the set") {
		t.Errorf("adopt says the archive is already in the set, whose copy is damaged:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, out.Archive) || !strings.Contains(r.stderr, "does not match its receipt") {
		t.Errorf("stderr %q, want the set's copy named and the cause", r.stderr)
	}
	if after := statDir(t, set); after != before {
		t.Errorf("the refused adopt changed the set:\n%s\nwant\n%s", after, before)
	}
	if got := readFile(t, copyPath); !bytes.Equal(got, data) {
		t.Error("the set's damaged copy was changed")
	}
}

// TestAdoptSourceNotUTF8Said: an archive made with -o of a SOURCE whose name is not UTF-8
// has a receipt naming it with U+FFFD (JSON holds UTF-8 only), so adopt refuses it as
// another source's. The line says both names once escaped: a U+FFFD left in a quoted name
// made every later escape of the line double its backslashes (\\\"b\\\\xffad\\\").
func TestAdoptSourceNotUTF8Said(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "b\xffad"), map[string]node{"f": {content: "x\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "a.zip", "b\xffad"), exitComplete)
	r := backup(t, runOpts{dir: dir}, "adopt", "set", "a.zip")
	mustExit(t, r, exitFailed)
	want := `backup adopt: a.zip: the archive's entries are under "b\xffad", its receipt names "b\ufffdad"; nothing copied` + "\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// TestAttackAdoptKeepsStaleArchiveTwin: an archive made with --output-dir into the folder
// d\xff (Latin-1 bytes) is adopted into a set in the folder d\uFFFD (a name that is valid
// UTF-8 and holds U+FFFD). The receipt adopt writes names the copy: archive.path
// "…/d\uFFFD/app-T.zip", which is valid UTF-8 and so needs no twin. But the twin read with
// the ARCHIVE's receipt (of "…/d\xff/app-T.zip") is kept, since the new path shows the same
// as the old one did: archive.path_b64 now decodes to the ARCHIVE's path outside the set, not
// to the set's copy. docs/formats.md: "Read path_b64 when it is there"; a reader that does
// finds the copy adopt was told it may drop, or nothing.
func TestAttackAdoptKeepsStaleArchiveTwin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a": {content: "a\n"}})
	from, set := filepath.Join(dir, "d\xff"), filepath.Join(dir, "d\uFFFD")
	for _, d := range []string{from, set} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", from, "app"), exitComplete)
	zips, _ := filepath.Glob(filepath.Join(from, "app-*.zip"))
	if len(zips) != 1 {
		t.Fatalf("archives in %q: %q", from, zips)
	}
	mustExit(t, backup(t, runOpts{}, "adopt", set, zips[0]), exitComplete)
	copy := filepath.Join(set, filepath.Base(zips[0]))
	data, err := os.ReadFile(copy + ".receipt.json")
	if err != nil {
		t.Fatal(err)
	}
	var rc struct {
		Archive struct {
			Path    string `json:"path"`
			PathB64 string `json:"path_b64"`
		} `json:"archive"`
	}
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	got := rc.Archive.Path
	if rc.Archive.PathB64 != "" {
		raw, err := base64.StdEncoding.DecodeString(rc.Archive.PathB64)
		if err != nil {
			t.Fatal(err)
		}
		got = string(raw)
	}
	if got != copy {
		t.Errorf("the set's receipt names its archive %q (path %q, path_b64 %q), want the copy %q",
			got, rc.Archive.Path, rc.Archive.PathB64, copy)
	}
}

// TestAttackAdoptReadsHugeFilePlantedAtItsName: cd38030 makes adopt check the size of the
// set's copy before it hashes it, so that "a huge sparse file planted at the name is not read
// under the set's lock". copyInto, which links the copy into place, still calls sameContent
// with no size (-1) when the link finds a file at the name: a file planted there while adopt
// copies (strace holds its linkat so the test can plant it; a large archive's copy gives the
// same window) is read end to end under the set's lock. Here a 1 TiB sparse file: adopt is
// still hashing it, holding the lock, long after the copy of a 1 KiB archive was done.
func TestAttackAdoptReadsHugeFilePlantedAtItsName(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "hi\n"}})
	archive := filepath.Join(dir, "a.zip")
	if r := backup(t, runOpts{}, "create", "-o", archive, filepath.Join(dir, "app")); r.code != exitComplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	set := filepath.Join(dir, "set")
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=linkat",
		"-e", "inject=linkat:delay_enter=2000000", binary, "adopt", set, archive)
	outFile := filepath.Join(dir, "adopt.out")
	of, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	cmd.Stdout, cmd.Stderr = of, of
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }()
	var receipt []string
	for deadline := time.Now().Add(20 * time.Second); len(receipt) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("adopt wrote no receipt")
		}
		receipt, _ = filepath.Glob(filepath.Join(set, "*.zip.receipt.json"))
	}
	name := strings.TrimSuffix(receipt[0], ".receipt.json")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Skipf("too late to plant: %v", err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		data, _ := os.ReadFile(outFile)
		t.Errorf("adopt still runs 30 s after a 1 TiB sparse file was planted at %s: reading it whole under the set's lock\n%s",
			filepath.Base(name), data)
	}
}

// TestAttackAdoptFutureRunSilencesAlerts: adopt takes the run's time from the receipt beside
// the archive, which no byte of the archive proves: a receipt edited (or written by a host
// whose clock is years ahead) to say the run started in 2099 is adopted as
// app-20990101T000000Z.zip. From then on it is the set's "newest complete backup" for ever:
// status --metrics-file reports backup_last_success_timestamp_seconds in 2099, so the
// BackupTooOld alert (time() - last success > 26h) can never fire again however stale LATEST
// gets, and prune's keep rules count it first and never delete it (--keep-last 2 keeps it
// and LATEST, deleting the real second-newest backup; --keep-within 30d, measured from the
// newest complete backup, deletes every real backup but LATEST).
// Correct: adopt refuses a run that started in the future (as status refuses such a LATEST:
// "started in the future, check the clock"), or the set never lets one count as its newest
// success.
func TestAttackAdoptFutureRunSilencesAlerts(t *testing.T) {
	t.Parallel()
	dir, set, first, elsewhere := adoptSet(t)
	editReceipt(t, elsewhere+".receipt.json", func(rc map[string]any) {
		rc["started_at"], rc["finished_at"] = "2099-01-01T00:00:00Z", "2099-01-01T00:00:05Z"
	})
	r := backup(t, runOpts{}, "adopt", set, elsewhere)
	if r.code != exitComplete {
		return // refused: correct
	}
	prom := filepath.Join(dir, "status.prom")
	backup(t, runOpts{}, "status", "--metrics-file", prom, set)
	last := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+set+`"}`)
	if time.Unix(int64(last), 0).After(time.Now().Add(time.Minute)) {
		t.Errorf("adopted a run that started in 2099 (%s); status's metrics now say the last success is %s, which silences the age alert for ever",
			strings.TrimSpace(r.stdout), time.Unix(int64(last), 0).UTC())
	}
	// --keep-within is measured from the newest complete backup: 2099's. A month of real
	// backups is then "not kept by any rule".
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	r = backup(t, runOpts{}, "prune", "--keep-within", "30d", set)
	if _, err := os.Stat(filepath.Join(set, first)); err != nil {
		t.Errorf("prune --keep-within 30d deleted %s, a backup of minutes ago, measuring 30 days from the adopted 2099 run:\n%s", first, r.stdout)
	}
}
