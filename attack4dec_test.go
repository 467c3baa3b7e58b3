package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fourth adversarial pass of December 2nd (attack4dec): each test is a defect found by
// auditing every line backup prints and every JSON record for names and text from outside,
// failing until it is fixed.

// hostile is a name that, printed raw, sets the terminal's title (OSC … BEL) and then
// returns the cursor to the start of the line (CR), to overwrite what a person reads.
const hostile = "a\x1b]0;pwned\x07\rb"

// rawLines returns the lines of a run's stdout and stderr that hold ESC, BEL or CR raw.
func rawLines(r result) []string {
	var raw []string
	for _, out := range []string{r.stdout, r.stderr} {
		for _, line := range strings.Split(out, "\n") {
			if strings.ContainsAny(line, "\x1b\x07\r") {
				raw = append(raw, line)
			}
		}
	}
	return raw
}

// TestAttack4DecUsageErrorPathsRaw: a usage error is printed by usageError (glue.go) as
// "backup CMD: %v" with the error as it is, and the errors of the path-valued flags and
// arguments embed the path as given: --exclude-from (create.go), --recipients-file and
// --identity (keys.go), --attic (prune.go), and activate's ARCHIVE given as a path
// (activate.go). docs/operations.md: every name or path printed for people is quoted when
// it holds a byte that is not printable; a path holding ESC, BEL or CR drives the terminal.
func TestAttack4DecUsageErrorPathsRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	runs := [][]string{
		{"create", "-o", "x.zip", "--exclude-from", "ex" + hostile, "app"},
		{"create", "-o", "x.zip.age", "--recipients-file", "rc" + hostile, "app"},
		{"verify", "--identity", "id" + hostile, "set"},
		{"prune", "--keep-last", "1", "--attic", "attic" + hostile, "set"},
		{"activate", "set", "d" + hostile + "/app-20261201T000000Z.zip"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage {
			t.Errorf("backup %s: exit %d, want the usage error %d; stderr %q", args[0], r.code, exitUsage, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("backup %s %q: printed the path raw: %q", args[0], args[len(args)-2], line)
		}
	}
}

// TestAttack4DecSetFolderRaw: the folder of a backup set, as the user gave it, is printed
// raw wherever a message names the set: "no backup in DIR yet" (setError, glue.go) of
// status, verify and list; "DIR/LATEST: is missing, but the set holds …" (latestError,
// backupset/latest.go); the lock's "DIR: another backup of this set is running"
// (takeLock, glue.go:114) of create, prune and activate; create's refusal of another source
// "DIR is the backup set of …" (create_sealed.go:45); adopt's "ARCHIVE: the archive holds
// …, and DIR is the backup set of …" (adopt.go:132, backupset/adopt.go:124), where the
// archive's path is raw too.
func TestAttack4DecSetFolderRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "1"}, "other/g": {content: "2"}, "empty" + hostile: {kind: "dir"}, "runs" + hostile: {kind: "dir"}})
	set := "set" + hostile
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "d"+hostile+".zip", "other"), exitComplete)
	// A set holding a run, and no LATEST.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "runs"+hostile, "app"), exitComplete)
	if err := os.Remove(filepath.Join(dir, "runs"+hostile, "LATEST")); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{
		{"status", "empty" + hostile},
		{"verify", "empty" + hostile},
		{"list", "empty" + hostile},
		{"status", "runs" + hostile},
		{"create", "--output-dir", set, "other"},
		{"adopt", set, "d" + hostile + ".zip"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		for _, line := range rawLines(r) {
			t.Errorf("backup %s (exit %d) printed the set's folder raw: %q", args[0], r.code, line)
		}
	}
	// The lock, held by another process.
	f, err := os.OpenFile(filepath.Join(dir, set, ".backup.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	holder := heldFlock(t, f.Name())
	defer holder()
	for _, args := range [][]string{
		{"create", "--output-dir", set, "app"},
		{"prune", "--keep-last", "1", set},
		{"activate", set, readLatest(t, filepath.Join(dir, set))},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitLocked)
		for _, line := range rawLines(r) {
			t.Errorf("backup %s, the set locked, printed the set's folder raw: %q", args[0], line)
		}
	}
}

// heldFlock holds an exclusive flock on path in a child process until the returned func is
// called.
func heldFlock(t *testing.T, path string) func() {
	t.Helper()
	cmd := exec.Command("flock", path, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	// Wait until the lock is taken: flock -n fails while the child holds it.
	for range 100 {
		if exec.Command("flock", "-n", path, "true").Run() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// TestAttack4DecReceiptStatusRaw: a receipt's status is set text, never checked against
// the three statuses when a receipt is parsed (format.ParseReceipt), and LATEST's receipt
// with another status is reported as "LATEST: names NAME: its receipt says STATUS"
// (backupset/latest.go:57) by status, verify, list, prune and create's "reading every file"
// line, and as "its receipt says STATUS; only a complete backup is a reference"
// (engine/reference.go:50) for a --reference: ESC, BEL and CR reach the terminal, where
// restore's own line escapes the same text.
func TestAttack4DecReceiptStatusRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	latest := readLatest(t, filepath.Join(dir, "set"))
	receipt := filepath.Join(dir, "set", latest+".receipt.json")
	var rc map[string]any
	if err := json.Unmarshal([]byte(string(readFile(t, receipt))), &rc); err != nil {
		t.Fatal(err)
	}
	rc["status"] = "complete" + hostile
	data, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receipt, data, 0o600); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{
		{"status", "set"},
		{"verify", "set"},
		{"list", "set"},
		{"prune", "--keep-last", "1", "--dry-run", "set"},
		{"create", "--output-dir", "set", "app"},
		{"create", "-o", "x.zip", "--reference", filepath.Join("set", latest), "app"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		if !strings.Contains(r.stderr, "receipt says") {
			t.Errorf("backup %s (exit %d) did not report the receipt's status: %q", args[0], r.code, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("backup %s (exit %d) printed the receipt's status raw: %q", args[0], r.code, line)
		}
	}
}

// TestAttack4DecKeyFileWarningRaw: a --recipients-file others may write and an --identity
// file others may read are used with a warning line, "backup CMD: warning: recipients file
// PATH can be written by group or others …" (seal/recipients.go:51, printed by keys.go:49)
// and "… identity file PATH can be read by group or others …" (seal/identities.go:34,
// keys.go:83), with PATH as given: ESC, BEL and CR reach the terminal on every run.
func TestAttack4DecKeyFileWarningRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := newAgeKey(t)
	makeTree(t, dir, map[string]node{
		"app/f":        {content: "1"},
		"rc" + hostile: {content: key.recipient + "\n", mode: 0o664},
		"id" + hostile: {content: string(readFile(t, key.identity)), mode: 0o644},
	})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "x.zip.age", "--recipients-file", "rc"+hostile, "app")
	mustExit(t, r, exitComplete)
	runs := []result{r, backup(t, runOpts{dir: dir}, "verify", "--identity", "id"+hostile, "x.zip.age")}
	for i, r := range runs {
		if !strings.Contains(r.stderr, "warning") {
			t.Errorf("run %d (exit %d) gave no warning: %q", i, r.code, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("run %d (exit %d) printed the key file's path raw: %q", i, r.code, line)
		}
	}
}

// TestAttack4DecOutputFilePathRaw: an output file that cannot be written is reported with
// its path as given: "backup: could not write metrics PATH: …" (create_finish.go:40,
// status.go:136, sets_output.go:182) and "backup: could not write receipt PATH: …"
// (create_run.go:243), where the failed line of the same run just above it escapes the same
// path ("backup: failed: creating archive …\x1b…").
func TestAttack4DecOutputFilePathRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	metrics := filepath.Join("nodir"+hostile, "m.prom")
	runs := [][]string{
		{"create", "-o", "x.zip", "--metrics-file", metrics, "app"},
		{"status", "--metrics-file", metrics, "set"},
		{"sets", "--metrics-file", metrics, "."},
		{"create", "-o", filepath.Join("nodir"+hostile, "y.zip"), "app"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		if !strings.Contains(r.stderr, "could not write") {
			t.Errorf("backup %s (exit %d) did not fail to write: %q", args[0], r.code, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("backup %s (exit %d) printed the output's path raw: %q", args[0], r.code, line)
		}
	}
}

// TestAttack4DecSetRunNamesJSONNotUTF8: a set's runs are the files whose names match
// SOURCE-STAMP.zip, any bytes as SOURCE (backupset/names.go), so a set may hold
// b\xff-….zip and b\xfe-….zip (copied in, or left by another tool); status --json's
// runs[].name, prune --json's runs[].name and prune --json-lines' decision name give both
// as "b\ufffd-….zip" with no name_b64 twin (status.go:48, prune.go:58), where docs/sets.md
// promises the _b64 twin "as in every --json of a set's commands": a script cannot tell
// which run prune deleted or kept.
func TestAttack4DecSetRunNamesJSONNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	set := filepath.Join(dir, "set")
	data, err := os.ReadFile(filepath.Join(set, readLatest(t, set)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b\xff-20261101T000000Z.zip", "b\xfe-20261101T000000Z.zip"} {
		if err := os.WriteFile(filepath.Join(set, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, runs []map[string]any) {
		t.Helper()
		seen := map[string]bool{}
		for _, run := range runs {
			key := ""
			for k, v := range run {
				if k == "name" || strings.HasPrefix(k, "name_") {
					key += k + "=" + v.(string) + ";"
				}
			}
			if seen[key] {
				t.Errorf("%s gives two runs as %q: the files b\\xff-… and b\\xfe-… cannot be told apart", what, key)
			}
			seen[key] = true
		}
		if len(runs) != 3 {
			t.Errorf("%s lists %d runs, want 3", what, len(runs))
		}
	}
	var status struct{ Runs []map[string]any }
	r := backup(t, runOpts{dir: dir}, "status", "--json", "set")
	if err := json.Unmarshal([]byte(r.stdout), &status); err != nil {
		t.Fatalf("status --json: %v: %q", err, r.stdout)
	}
	check("status --json", status.Runs)
	var prune struct{ Runs []map[string]any }
	r = backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--dry-run", "--json", "set")
	if err := json.Unmarshal([]byte(r.stdout), &prune); err != nil {
		t.Fatalf("prune --json: %v: %q", err, r.stdout)
	}
	check("prune --json", prune.Runs)
	r = backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--dry-run", "--json-lines", "set")
	var decisions []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("prune --json-lines: %v: %q", err, line)
		}
		if ev["type"] == "decision" {
			delete(ev, "type")
			decisions = append(decisions, ev)
		}
	}
	check("prune --json-lines", decisions)
}

// TestAttack4DecRestoreUndoJSONNotUTF8: restore --force writes its before-state beside DEST
// under DEST's own name (DEST-before-restore-STAMP.zip), and restore --json gives the way
// back as "undo": {"archive", "receipt"} in plain JSON strings (restore_undo.go:21-22), as it
// gives "dest" and "archive" (restore.go:85-86): a DEST named d\xff gives
// "d\ufffd-before-restore-….zip", no file of that name exists, and no _b64 twin says which
// does, where docs/formats.md says "Every JSON record is UTF-8; a name that is not has a
// _b64 twin". The human line quotes the same path losslessly ("d\xff-before-restore-…").
func TestAttack4DecRestoreUndoJSONNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dest := "d\xff"
	makeTree(t, dir, map[string]node{"app/f": {content: "new\n"}, dest + "/app/f": {content: "old\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", "a.zip", dest)
	mustExit(t, r, exitComplete)
	var out struct {
		Undo map[string]string
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("restore --json: %v: %q", err, r.stdout)
	}
	if out.Undo == nil {
		t.Fatalf("restore --force --json gave no undo: %s", r.stdout)
	}
	for _, field := range []string{"archive", "receipt"} {
		path := out.Undo[field]
		if _, err := os.Lstat(path); err != nil && out.Undo[field+"_b64"] == "" {
			t.Errorf("restore --json's undo.%s is %q, which does not exist (%v), and has no %s_b64 twin", field, path, err, field)
		}
	}
}

// TestAttack4DecDotDotSetReadLexically: a set given as a path holding ".." after a symlink
// (w/x/lnk/.., lnk -> ../real/sub) is the folder the kernel reaches (w/real) for status,
// sets, prune and create --output-dir (absPath, kernelPath); but verify, list and restore
// take the same argument to resolveArchive (set_resolve.go:44-52), which os.Stat's it as the
// kernel does and then reads LATEST and the archive through backupset.Folder{Dir: arg} and
// filepath.Join(arg, name), which clean lnk/.. away: they read the set in w/x. The same
// argument names two sets: status says app's set, restore restores another's files.
func TestAttack4DecDotDotSetReadLexically(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"app/f":      {content: "app's\n"},
		"other/g":    {content: "other's\n"},
		"w/real/sub": {kind: "dir"},
		"w/x/lnk":    {kind: "symlink", content: "../real/sub"},
	})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "w/real", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "w/x", "other"), exitComplete)
	set := "w/x/lnk/.."
	r := backup(t, runOpts{dir: dir}, "status", set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "app-") {
		t.Fatalf("status %s does not name app's set (w/real): %q", set, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "list", set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "app/f") {
		t.Errorf("list %s lists another set than status %s names: %q", set, set, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "verify", set)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stdout, "other-") {
		t.Errorf("verify %s verified another set's archive than status names: %q", set, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "restore", set, "dst")
	mustExit(t, r, exitComplete)
	if _, err := os.Stat(filepath.Join(dir, "dst", "app", "f")); err != nil {
		t.Errorf("restore %s dst did not restore the set status names (w/real, app): %v; dst holds %v", set, err, listDir(t, filepath.Join(dir, "dst")))
	}
}

// TestAttack4DecDotDotMetricsFileStagedLexically: --metrics-file is the one output of create
// (and of status and sets) not made absolute by absPath: given as x/lnk/../m.prom (lnk a
// symlink to a folder on another filesystem), the check of outputs looks where the kernel
// puts it (pathcheck resolves lnk first), but atomicfile.Stage (atomicfile/file.go:32)
// writes its temp file in filepath.Dir of the path as given, x (lnk/.. cleaned away), and
// the rename across filesystems fails: "could not write metrics …: invalid cross-device
// link", where -o x/lnk/../a.zip in the same run is written, and --metrics-file named
// without .. is written too. On one filesystem the temp file is made in a folder the check
// never looked at.
func TestAttack4DecDotDotMetricsFileStagedLexically(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other, err := os.MkdirTemp("/dev/shm", "attack4-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(other)
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is not another filesystem than the test's temp folder")
	}
	makeTree(t, dir, map[string]node{"app/f": {content: "1"}, "x/lnk": {kind: "symlink", content: filepath.Join(other, "sub")}})
	makeTree(t, other, map[string]node{"sub": {kind: "dir"}})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "x/lnk/../a.zip", "--metrics-file", "x/lnk/../m.prom", "app")
	mustExit(t, r, exitComplete)
	if _, err := os.Stat(filepath.Join(other, "a.zip")); err != nil {
		t.Fatalf("-o x/lnk/../a.zip was not written where the kernel puts it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "m.prom")); err != nil {
		t.Errorf("--metrics-file x/lnk/../m.prom was not written (%v): %q", err, r.stderr)
	}
}
