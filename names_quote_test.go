package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backup/format"

	"golang.org/x/sys/unix"
)

// Names that would forge a line of output or drive the terminal if printed raw: a newline
// followed by a summary line, an OSC sequence that retitles the terminal, a screen clear.
const (
	forgeName = "x\nbackup restore: complete: 0 files"
	titleName = "t\x1b]0;pwned\x07"
	clearName = "c\x1b[2J"
)

// assertQuoted checks that out holds each name quoted as Go's %q does, never raw, and no
// escape or bell byte at all.
func assertQuoted(t *testing.T, what, out string, names ...string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("%s prints an escape or bell byte raw:\n%q", what, out)
	}
	for _, name := range names {
		if strings.Contains(out, name) {
			t.Errorf("%s prints %q raw:\n%q", what, name, out)
		}
		if !strings.Contains(out, strconv.Quote(name)) {
			t.Errorf("%s does not print %q quoted:\n%q", what, name, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "backup restore: complete: 0 files") {
			t.Errorf("%s prints a forged line %q", what, line)
		}
	}
}

// TestNamesQuotedOnTerminal: every name that reaches a human's output (create's -v list and
// summary, list, verify, restore's refusals, conflicts and problems) is quoted when it holds
// a byte that is not printable; --json gives the names as they are.
func TestNamesQuotedOnTerminal(t *testing.T) {
	t.Parallel()
	mustRoot(t) // an unreadable file, read as nobody
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{
		forgeName:       {content: "forge\n"},
		titleName:       {content: "title\n"},
		clearName + "/": {kind: "dir"},
		"plain.txt":     {content: "plain\n"},
		"fifo\x1b[1m":   {kind: "fifo"},
	})
	os.Chmod(filepath.Join(src, titleName), 0) // lost: nobody cannot read it
	arch := filepath.Join(dir, "a.zip")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-v", "-o", arch, "app")
	mustExit(t, r, exitIncomplete)
	assertQuoted(t, "create -v", r.stderr, "app/"+forgeName, "app/"+clearName+"/", "app/"+titleName)
	if !strings.Contains(r.stderr, "app/plain.txt\n") {
		t.Errorf("create -v quotes a plain name, or lacks it:\n%q", r.stderr)
	}

	r = backup(t, runOpts{dir: dir}, "list", arch)
	assertQuoted(t, "list", r.stdout+r.stderr, "app/"+forgeName, "app/"+clearName+"/", "app/fifo\x1b[1m", "app/"+titleName)
	r = backup(t, runOpts{dir: dir}, "list", "--json", arch)
	var listed listJSON
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(listed.Entries, func(e listEntryJSON) bool { return e.Name == "app/"+forgeName }) {
		t.Errorf("list --json lacks the raw name %q: %+v", "app/"+forgeName, listed.Entries)
	}

	// A conflict, and a skipped special entry of a foreign archive.
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{forgeName: {content: "other\n"}})
	r = backup(t, runOpts{dir: dir}, "restore", arch, dest)
	assertQuoted(t, "restore (conflict)", r.stderr, "app/"+forgeName)
	foreign := filepath.Join(dir, "foreign.zip")
	writeHostileZip(t, foreign, []hostileEntry{{name: "f/" + clearName, body: "/etc", symlink: true}, {name: "f/ok", body: "ok"}})
	r = backup(t, runOpts{dir: dir}, "restore", foreign, filepath.Join(dir, "dest2"))
	assertQuoted(t, "restore (skipped)", r.stderr, "f/"+clearName)

	// Unsafe names, in restore and verify.
	hostile := filepath.Join(dir, "hostile.zip")
	writeHostileZip(t, hostile, []hostileEntry{{name: "../" + forgeName, body: "x"}, {name: "/" + titleName, body: "x"}})
	r = backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest3"))
	mustExit(t, r, exitFailed)
	assertQuoted(t, "restore (refused)", r.stderr, "../"+forgeName, "/"+titleName)
	r = backup(t, runOpts{dir: dir}, "verify", hostile)
	mustExit(t, r, exitFailed)
	assertQuoted(t, "verify", r.stderr, "../"+forgeName, "/"+titleName)
	r = backup(t, runOpts{dir: dir}, "restore", "--json", hostile, filepath.Join(dir, "dest3"))
	if out := restoreJSONOf(t, r); len(out.Refused) == 0 || out.Refused[0].Entry != "../"+forgeName {
		t.Errorf("restore --json refused %+v, want the raw name %q first", out.Refused, "../"+forgeName)
	}
}

// TestAttackSetNamesRawOnTerminal: a SOURCE whose base name holds an escape sequence
// (an OSC that sets the terminal's title) or a carriage return names a backup set's
// archives (only a newline, "..", "/" and NUL are refused there). docs/operations.md: "A name
// (or path) that holds a byte that is not printable ... is printed quoted as Go's %q does,
// wherever a person reads it ... so no name can forge a line or drive the terminal". create's
// summary line quotes the archive's path, but the set's own lines printed the archive name
// raw: create's "LATEST -> …", verify's "matches ….receipt.json", status's table and verdict,
// prune's decisions. A "\r" there overwrites the verdict a person reads ("x\rFORGED…").
func TestAttackSetNamesRawOnTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := hostileText
	makeTree(t, filepath.Join(dir, "src", name), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	runs := [][]string{
		{"create", "--output-dir", set, filepath.Join("src", name)},
		{"verify", set},
		{"status", set},
		{"prune", "--keep-last", "1", set},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitComplete)
		for _, line := range rawLines(r) {
			t.Errorf("backup %s printed the set's archive name raw: %q", args[0], line)
		}
	}
}

// TestAttackReceiptPathForgesLines: the archive path a receipt in the set records is text
// anyone who can write the set (a bucket's other writers) controls. When it names another
// archive than its own, status, verify, list, prune (and status's table for any run) print
// its base name raw inside their reason: a newline forges a line of backup's own ("ok: ...")
// and an escape sequence drives the terminal. docs/operations.md: "Text that embeds a name (a
// reason, an error) has such bytes escaped the same way, so no name can forge a line or drive
// the terminal"; docs/s3.md: text from the bucket is "quoted when it holds a newline, control
// or format character, so it can never forge a line of backup's own". (backup sets quotes it.)
func TestAttackReceiptPathForgesLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	receipt := filepath.Join(set, readLatest(t, set)+".receipt.json")
	data, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	const forged = "ok: LATEST forged.zip is complete"
	rc["archive"].(map[string]any)["path"] = "/x/evil\n" + forged + "\x1b]0;owned\a"
	if data, err = json.Marshal(rc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receipt, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", set}, {"verify", set}, {"list", set}, {"prune", "--keep-last", "1", set}} {
		r := backup(t, runOpts{dir: dir}, args...)
		out := r.stdout + r.stderr
		if strings.Contains(out, "\n"+forged) || strings.Contains(out, "\x1b") {
			t.Errorf("%s: exit %d; a receipt's archive path forged a line or reached the terminal raw:\n%s", args[0], r.code, out)
		}
	}
}

// TestAttackActivationRecordForgesLines: LATEST.activated is a file of the set (an object
// of the bucket), written by anyone who can write there; its "by" is printed raw in status's
// note on a hand-made activation: a newline forges a line, an escape drives the terminal.
func TestAttackActivationRecordForgesLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	first := readLatest(t, set)
	time.Sleep(1100 * time.Millisecond) // a second run in another second
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "activate", set, first), exitComplete)
	const forged = "ok: LATEST forged.zip is complete"
	record, err := json.Marshal(map[string]string{"archive": first, "activated_at": time.Now().UTC().Format(time.RFC3339), "by": "activate\n" + forged + "\x1b]0;owned\a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(set, "LATEST.activated"), record, 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "status", set)
	if out := r.stdout + r.stderr; strings.Contains(out, "\n"+forged) || strings.Contains(out, "\x1b") {
		t.Errorf("status: exit %d; LATEST.activated's \"by\" forged a line or reached the terminal raw:\n%s", r.code, out)
	}
}

// TestAttackSetNamesRawActivateAdopt: the fix of TestAttackSetNamesRawOnTerminal
// quotes a set's archive names in create, verify, status's table and verdict and prune, but
// not in activate ("LATEST -> NAME (complete, was NAME)", with --dry-run too, and "not
// activating NAME: …"), adopt ("adopted PATH as NAME", "PATH is already in the set as NAME")
// or status's note on a hand-made activation ("LATEST is not the newest complete backup
// (NAME is newer)"): a name holding ESC, BEL or CR still drives the terminal or overwrites
// the line a person reads. docs/operations.md: such a name "is printed quoted as Go's %q
// does, wherever a person reads it".
func TestAttackSetNamesRawActivateAdopt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := hostileText
	makeTree(t, filepath.Join(dir, "src", name), map[string]node{"f": {content: "1"}})
	makeTree(t, dir, map[string]node{"other": {kind: "dir"}})
	set := filepath.Join(dir, "set")
	src := filepath.Join("src", name)
	for range 2 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, src), exitComplete)
	}
	var older string // the run LATEST does not name
	for _, n := range listDir(t, set) {
		if strings.HasSuffix(n, ".zip") && n != readLatest(t, set) {
			older = n
		}
	}
	foreign := filepath.Join(dir, "other", name+"-20261201T000000Z.zip")
	makeTree(t, filepath.Join(dir, src), map[string]node{"g": {content: "2"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", foreign, src), exitComplete)
	copyOf := filepath.Join(dir, "other", "copy-20261130T000000Z.zip")
	for _, ext := range []string{"", ".receipt.json"} {
		data, err := os.ReadFile(foreign + ext)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copyOf+ext, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runs := [][]string{
		{"activate", "--dry-run", set, older},
		{"activate", set, older},
		{"status", set},
		{"activate", set, "missing-" + older}, // not activating …
		{"adopt", set, foreign},
		{"adopt", set, copyOf},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		for _, line := range rawLines(r) {
			t.Errorf("backup %s (exit %d) printed a set's archive name raw: %q", args[0], r.code, line)
		}
	}
}

// TestAttackLatestNameRaw: LATEST is one line of set (or bucket) text. A LATEST naming
// an archive the set does not hold is reported by status, verify, list, prune and create as
// "LATEST: names NAME: the archive is missing", and create's refusal of another source as
// "(LATEST names NAME)", with NAME as LATEST holds it: ESC, BEL and CR reach the terminal
// ("\r" overwrites the line a person reads), where the fix of
// TestAttackSetNamesRawOnTerminal quotes every other archive name. docs/operations.md:
// "Text that embeds a name (a reason, an error) has such bytes escaped the same way, so no
// name can forge a line or drive the terminal".
func TestAttackLatestNameRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte("app-x\x1b]0;pwned\x07\rFORGED-20261202T000000Z.zip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{
		{"status", set},
		{"verify", set},
		{"list", set},
		{"prune", "--keep-last", "1", set},
		{"create", "--output-dir", set, "app"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		for _, line := range rawLines(r) {
			t.Errorf("backup %s (exit %d) printed LATEST's name raw: %q", args[0], r.code, line)
		}
	}
}

// TestAttackCreatePrunedNamesRaw: create --keep-* in a set prints a line for each backup
// it prunes ("  deleted NAME (complete, not kept by any rule)") with NAME raw, where prune's
// own decisions quote it since the fix of TestAttackSetNamesRawOnTerminal: an archive
// name holding ESC, BEL or CR (from a SOURCE's base name) drives the terminal after every
// nightly run.
func TestAttackCreatePrunedNamesRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := hostileText
	makeTree(t, filepath.Join(dir, "src", name), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	src := filepath.Join("src", name)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, src), exitComplete)
	r := backup(t, runOpts{dir: dir}, "create", "--keep-last", "1", "--output-dir", set, src)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr+r.stdout, "deleted") {
		t.Fatalf("create --keep-last 1 pruned nothing: %q", r.stderr)
	}
	for _, line := range rawLines(r) {
		t.Errorf("create --keep-last printed a pruned archive's name raw: %q", line)
	}
}

// hostileText is a name that, printed raw, sets the terminal's title (OSC … BEL) and then
// returns the cursor to the start of the line (CR), to overwrite what a person reads.
const hostileText = "a\x1b]0;pwned\x07\rb"

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

// heldFlock holds an exclusive flock on path, as a running backup holds its set's lock,
// until the returned func is called.
func heldFlock(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// TestAttackUsageErrorPathsRaw: a usage error is printed by usageError (glue.go) as
// "backup CMD: %v" with the error as it is, and the errors of the path-valued flags and
// arguments embed the path as given: --exclude-from (create.go), --recipients-file and
// --identity (keys.go), --attic (prune.go), and activate's ARCHIVE given as a path
// (activate.go). docs/operations.md: every name or path printed for people is quoted when
// it holds a byte that is not printable; a path holding ESC, BEL or CR drives the terminal.
func TestAttackUsageErrorPathsRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	runs := [][]string{
		{"create", "-o", "x.zip", "--exclude-from", "ex" + hostileText, "app"},
		{"create", "-o", "x.zip.age", "--recipients-file", "rc" + hostileText, "app"},
		{"verify", "--identity", "id" + hostileText, "set"},
		{"prune", "--keep-last", "1", "--attic", "attic" + hostileText, "set"},
		{"activate", "set", "d" + hostileText + "/app-20261201T000000Z.zip"},
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

// TestAttackSetFolderRaw: the folder of a backup set, as the user gave it, is printed
// raw wherever a message names the set: "no backup in DIR yet" (setError, glue.go) of
// status, verify and list; "DIR/LATEST: is missing, but the set holds …" (latestError,
// backupset/latest.go); the lock's "DIR: another backup of this set is running"
// (takeLock, glue.go:114) of create, prune and activate; create's refusal of another source
// "DIR is the backup set of …" (create_sealed.go:45); adopt's "ARCHIVE: the archive holds
// …, and DIR is the backup set of …" (adopt.go:132, backupset/adopt.go:124), where the
// archive's path is raw too.
func TestAttackSetFolderRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "1"}, "other/g": {content: "2"}, "empty" + hostileText: {kind: "dir"}, "runs" + hostileText: {kind: "dir"}})
	set := "set" + hostileText
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "d"+hostileText+".zip", "other"), exitComplete)
	// A set holding a run, and no LATEST.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "runs"+hostileText, "app"), exitComplete)
	if err := os.Remove(filepath.Join(dir, "runs"+hostileText, "LATEST")); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{
		{"status", "empty" + hostileText},
		{"verify", "empty" + hostileText},
		{"list", "empty" + hostileText},
		{"status", "runs" + hostileText},
		{"create", "--output-dir", set, "other"},
		{"adopt", set, "d" + hostileText + ".zip"},
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

// TestAttackReceiptStatusRaw: a receipt's status is set text, never checked against
// the three statuses when a receipt is parsed (format.ParseReceipt), and LATEST's receipt
// with another status is reported as "LATEST: names NAME: its receipt says STATUS"
// (backupset/latest.go:57) by status, verify, list, prune and create's "reading every file"
// line, and as "its receipt says STATUS; only a complete backup is a reference"
// (engine/reference.go:50) for a --reference: ESC, BEL and CR reach the terminal, where
// restore's own line escapes the same text. A receipt is now refused when its status is
// none of the three, with the status escaped in the reason.
func TestAttackReceiptStatusRaw(t *testing.T) {
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
	rc["status"] = "complete" + hostileText
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
		if !strings.Contains(r.stderr, `status "completea\x1b]0;pwned\a\rb" is not complete, incomplete or failed`) {
			t.Errorf("backup %s (exit %d) did not report the receipt's status: %q", args[0], r.code, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("backup %s (exit %d) printed the receipt's status raw: %q", args[0], r.code, line)
		}
	}
}

// TestAttackKeyFileWarningRaw: a --recipients-file others may write and an --identity
// file others may read are used with a warning line, "backup CMD: warning: recipients file
// PATH can be written by group or others …" (seal/recipients.go:51, printed by keys.go:49)
// and "… identity file PATH can be read by group or others …" (seal/identities.go:34,
// keys.go:83), with PATH as given: ESC, BEL and CR reach the terminal on every run.
func TestAttackKeyFileWarningRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := newAgeKey(t)
	makeTree(t, dir, map[string]node{
		"app/f":            {content: "1"},
		"rc" + hostileText: {content: key.recipient + "\n", mode: 0o664},
		"id" + hostileText: {content: string(readFile(t, key.identity)), mode: 0o644},
	})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "x.zip.age", "--recipients-file", "rc"+hostileText, "app")
	mustExit(t, r, exitComplete)
	runs := []result{r, backup(t, runOpts{dir: dir}, "verify", "--identity", "id"+hostileText, "x.zip.age")}
	for i, r := range runs {
		if !strings.Contains(r.stderr, "warning") {
			t.Errorf("run %d (exit %d) gave no warning: %q", i, r.code, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("run %d (exit %d) printed the key file's path raw: %q", i, r.code, line)
		}
	}
}

// TestAttackOutputFilePathRaw: an output file that cannot be written is reported with
// its path as given: "backup: could not write metrics PATH: …" (create_finish.go:40,
// status.go:136, sets_output.go:182) and "backup: could not write receipt PATH: …"
// (create_run.go:243), where the failed line of the same run just above it escapes the same
// path ("backup: failed: creating archive …\x1b…").
func TestAttackOutputFilePathRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	metrics := filepath.Join("nodir"+hostileText, "m.prom")
	runs := [][]string{
		{"create", "-o", "x.zip", "--metrics-file", metrics, "app"},
		{"status", "--metrics-file", metrics, "set"},
		{"sets", "--metrics-file", metrics, "."},
		{"create", "-o", filepath.Join("nodir"+hostileText, "y.zip"), "app"},
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

// TestAttackDoubleEscapedLatestName: a set's archive name holds a backslash (its SOURCE
// was named w\z) and its receipt's status holds an ESC. The LATEST error wraps the name
// already quoted by QuoteName, and sayf then escapes the whole error again: the name is
// printed w\\z (a \" for a quote) on that line, where every other line prints it w\z.
func TestAttackDoubleEscapedLatestName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, `w\z`)
	set := filepath.Join(dir, "set")
	makeTree(t, dir, map[string]node{`w\z/f`: {content: "x"}, "set": {kind: "dir"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, src), 0)
	name := readLatest(t, set)
	receipt := filepath.Join(set, name+format.ReceiptSuffix)
	data := string(readFile(t, receipt))
	if !strings.Contains(data, `"status": "complete"`) {
		t.Fatalf("receipt has no complete status:\n%s", data)
	}
	data = strings.Replace(data, `"status": "complete"`, `"status": "fail\u001bed"`, 1)
	if err := os.WriteFile(receipt, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "verify", set)
	if r.code == 0 {
		t.Fatalf("verify of a set whose LATEST receipt says failed exited 0:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "\x1b") {
		t.Fatalf("raw ESC on stderr: %q", r.stderr)
	}
	if want := "names " + format.QuoteName(name) + ":"; !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr names LATEST's target otherwise than as %q (escaped twice):\n%s", want, r.stderr)
	}
}

// TestAttackListSkippedKindRaw: list prints the manifest's skipped paths on stderr, each
// with its kind, by fmt.Sprintf and Fprintln, not sayf: a hostile archive whose manifest gives
// a skipped entry the kind "fifo\x1b[2J" drives the terminal with a raw ESC, where the
// warnings' op and error on the next lines are escaped.
func TestAttackListSkippedKindRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), 0)
	in, err := zip.OpenReader(filepath.Join(dir, "a.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var buf bytes.Buffer
	out := zip.NewWriter(&buf)
	for _, f := range in.File {
		if f.Name != format.ManifestName {
			if err := out.Copy(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.NewDecoder(rc).Decode(&m); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		m["status"] = "incomplete"
		m["skipped"] = []any{map[string]any{"path": "p", "kind": "fifo\x1b[2J"}}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		w, err := out.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "evil.zip"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "list", "evil.zip")
	if !strings.Contains(r.stderr, "skipped p") {
		t.Fatalf("list did not print the skipped entry (exit %d):\n%q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "\x1b") {
		t.Fatalf("list printed the manifest's skipped kind raw, ESC and all:\n%q", r.stderr)
	}
}

// TestAttackPruneAtticPathRaw: prune --attic ends with "moved to DIR N, kept M", where DIR
// is the attic's path as it is: a folder named with an ESC drives the terminal, where every
// other path a person reads is quoted (docs/operations.md: "wherever a person reads it").
func TestAttackPruneAtticPathRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	attic := "at\x1b[2Jtic"
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "set": {kind: "dir"}, attic: {kind: "dir"}})
	for i := 0; i < 2; i++ {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "src"), 0)
	}
	r := backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--attic", attic, "set")
	mustExit(t, r, 0)
	if !strings.Contains(r.stdout, "moved to") {
		t.Fatalf("prune --attic said nothing of the move:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b") {
		t.Fatalf("prune --attic printed the attic's path raw, ESC and all:\n%q", r.stdout)
	}
}

// A set whose LATEST names an archive with a non-printable byte in its name (from the
// SOURCE's name) and whose receipt is refused (a status backup never writes): the stderr
// line quotes the name with QuoteName ("names %s" in backupset.target) inside an error that
// also carries the receipt's path raw, so sayf escapes the whole error text and the already
// quoted name a second time: names \"a\\x01b-...zip\" where status's own table prints
// "a\x01b-...zip".
func TestAttackLatestNameEscapedTwice(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a\x01b")
	makeTree(t, src, map[string]node{"f": {content: "hi\n"}})
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "a\x01b"), 0)
	pointer, err := os.ReadFile(filepath.Join(set, "LATEST"))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(pointer))
	receipt := filepath.Join(set, name+format.ReceiptSuffix)
	data, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"status": "complete"`, `"status": "bogus"`, 1))
	if err := os.WriteFile(receipt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	quoted := format.QuoteName(name) // "a\x01b-...zip", as every other line prints it
	for _, cmd := range []string{"status", "verify", "list"} {
		r := backup(t, runOpts{dir: dir}, cmd, "set")
		mustExit(t, r, 1)
		if !strings.Contains(r.stderr, "names "+quoted+":") {
			t.Errorf("%s: stderr does not name LATEST's target as %s (QuoteName, escaped once):\n%s", cmd, quoted, r.stderr)
		}
		if strings.Contains(r.stderr, `\\x01`) {
			t.Errorf("%s: the name is escaped twice (\\\\x01):\n%s", cmd, r.stderr)
		}
	}
}
