package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// twoRunSet makes a set with two real backups, A and B, and points LATEST at the older, A:
// a reader that fell back to "the newest file" would pick B.
func twoRunSet(t *testing.T) (set, a, b string) {
	t.Helper()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set = filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "b\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	archives := setArchives(t, set)
	a, b = archives[0], archives[2]
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte(a+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return set, a, b
}

// TestSetLatestCorrupt damages LATEST or its target in every way the readers must refuse:
// status, verify, list, restore and prune exit 1 naming the problem, status marks no archive
// as LATEST, restore writes nothing and prune deletes nothing.
func TestSetLatestCorrupt(t *testing.T) {
	t.Parallel()
	base, a, b := twoRunSet(t)
	r := backup(t, runOpts{}, "status", base)
	if r.code != exitComplete || !strings.Contains(r.stdout, a+"  <- LATEST") {
		t.Fatalf("the undamaged set: exit %d, stdout:\n%s%s", r.code, r.stdout, r.stderr)
	}
	write := func(name, content string) func(string) error {
		return func(set string) error { return os.WriteFile(filepath.Join(set, name), []byte(content), 0o644) }
	}
	remove := func(name string, then func(path string) error) func(string) error {
		return func(set string) error {
			if err := os.Remove(filepath.Join(set, name)); err != nil {
				return err
			}
			return then(filepath.Join(set, name))
		}
	}
	copyReceipt := func(set string) error {
		data, err := os.ReadFile(filepath.Join(set, b+".receipt.json"))
		if err == nil {
			err = os.WriteFile(filepath.Join(set, a+".receipt.json"), data, 0o600)
		}
		return err
	}
	nothing := func(string) error { return nil }
	tests := []struct {
		name   string
		damage func(set string) error
		want   string
	}{
		{"symlink", remove("LATEST", func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "ptr"), p) }), "/LATEST: is a symlink"},
		{"directory", remove("LATEST", func(p string) error { return os.Mkdir(p, 0o755) }), "/LATEST: is a directory"},
		{"fifo", remove("LATEST", func(p string) error { return syscall.Mkfifo(p, 0o644) }), "/LATEST: is not a regular file"},
		{"two lines", write("LATEST", a+"\n"+b+"\n"), "/LATEST: has more than one line"},
		{"trailing junk", write("LATEST", a+" \n"), "/LATEST: has trailing junk after the name"},
		{"slash", write("LATEST", "../set/"+a+"\n"), "which holds a /"},
		{"dotdot", write("LATEST", "..\n"), "which holds .."},
		{"NUL", write("LATEST", a+"\x00\n"), "/LATEST: holds a NUL byte"},
		{"missing archive", remove(a, func(string) error { return nil }), "/LATEST: names " + a + ": the archive is missing"},
		{"archive is a symlink", remove(a, func(p string) error { return os.Symlink(b, p) }), "/LATEST: names " + a + ": the archive is a symlink"},
		{"receipt of another archive", copyReceipt, "/LATEST: names " + a + ": its receipt describes another archive, " + b},
		{"receipt missing", remove(a+".receipt.json", nothing), "/LATEST: names " + a + ": its receipt is missing"},
		{"missing with archives", remove("LATEST", nothing), "/LATEST: is missing, but the set holds 2 runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := filepath.Join(t.TempDir(), "set")
			if out, err := exec.Command("cp", "-a", base, set).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			os.WriteFile(filepath.Join(set, "ptr"), []byte(b+"\n"), 0o644)
			if err := tt.damage(set); err != nil {
				t.Fatal(err)
			}
			before := leftovers(t, set)
			r := backup(t, runOpts{}, "status", set)
			if r.code != exitFailed || !strings.HasPrefix(r.stderr, "backup status: "+set) || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("status: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want)
			}
			if strings.Contains(r.stdout, "LATEST") {
				t.Errorf("status named an archive LATEST:\n%s", r.stdout)
			}
			assertStatusJSON(t, set, tt.want)
			for _, cmd := range [][]string{{"verify", set}, {"verify", "--json", set}, {"list", set}, {"restore", set, filepath.Join(set, "..", "dest")}} {
				r := backup(t, runOpts{}, cmd...)
				if r.code != exitFailed || !strings.HasPrefix(r.stderr, "backup "+cmd[0]+": "+set) || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", cmd, r.code, r.stderr, exitFailed, tt.want)
				}
			}
			if _, err := os.Lstat(filepath.Join(set, "..", "dest")); err == nil {
				t.Error("restore created its destination")
			}
			r = backup(t, runOpts{}, "prune", "--keep-last", "1", set)
			if r.code != exitFailed || !strings.Contains(r.stderr, "not pruning") || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("prune: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want)
			}
			if after := leftovers(t, set); !slices.Equal(after, before) {
				t.Errorf("prune changed the set:\n%v\nwas\n%v", after, before)
			}
		})
	}
}

func assertStatusJSON(t *testing.T, set, want string) {
	t.Helper()
	r := backup(t, runOpts{}, "status", "--json", set)
	var got statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("status --json printed %q: %v", r.stdout, err)
	}
	if r.code != exitFailed || got.Healthy || got.Latest != nil || !strings.Contains(got.Reason, want) {
		t.Errorf("status --json: exit %d, %+v; want unhealthy, no latest, reason %q", r.code, got, want)
	}
	for _, run := range got.Runs {
		if run.Latest {
			t.Errorf("status --json marked %s as LATEST", run.Name)
		}
	}
}

// TestSetReadersUseLatest: verify, list and restore given a set's folder use the archive
// LATEST names, here the older of two.
func TestSetReadersUseLatest(t *testing.T) {
	t.Parallel()
	set, a, _ := twoRunSet(t)
	r := backup(t, runOpts{}, "verify", set)
	if r.code != exitComplete || !strings.Contains(r.stdout, "matches "+filepath.Join(set, a)+".receipt.json") {
		t.Errorf("verify: exit %d, stdout %q, stderr %q; want %s verified against its receipt", r.code, r.stdout, r.stderr, a)
	}
	r = backup(t, runOpts{}, "list", set)
	if r.code != exitComplete || r.stdout != "app/\napp/a\n" {
		t.Errorf("list: exit %d, stdout %q; want A's entries only", r.code, r.stdout)
	}
	dest := filepath.Join(t.TempDir(), "dest")
	mustExit(t, backup(t, runOpts{}, "restore", set, dest), exitComplete)
	assertContent(t, filepath.Join(dest, "app", "a"), "a\n")
	if _, err := os.Lstat(filepath.Join(dest, "app", "b")); err == nil {
		t.Error("restore restored the newer archive's file")
	}
}

// TestSetCreateHealsLatest: a damaged LATEST does not stop a backup; the new, verified
// archive replaces the pointer, and the run says so.
func TestSetCreateHealsLatest(t *testing.T) {
	t.Parallel()
	set, a, b := twoRunSet(t)
	os.WriteFile(filepath.Join(set, "LATEST"), []byte(a+"\n"+b+"\n"), 0o644)
	dir := filepath.Dir(set)
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "has more than one line; this run replaces it") {
		t.Errorf("stderr %q does not mention the damaged pointer", r.stderr)
	}
	archives := setArchives(t, set)
	if got := readLatest(t, set); got != archives[len(archives)-2] {
		t.Errorf("LATEST %q, want the new archive", got)
	}
	mustExit(t, backup(t, runOpts{}, "status", "--max-age", "1h", set), exitComplete)
}

// TestSetCreateWithoutLatestKeepsSource: a lost or damaged LATEST does not open the set to
// another source: create asks the newest run instead, refuses (exit 1, nothing written) and
// says why; the set's own source still heals the pointer.
func TestSetCreateWithoutLatestKeepsSource(t *testing.T) {
	t.Parallel()
	set, _, _ := twoRunSet(t)
	dir := filepath.Dir(set)
	makeTree(t, filepath.Join(dir, "other"), map[string]node{"o": {content: "o\n"}})
	for _, latest := range []string{"junk\n", ""} {
		if latest == "" {
			os.Remove(filepath.Join(set, "LATEST"))
		} else {
			os.WriteFile(filepath.Join(set, "LATEST"), []byte(latest), 0o644)
		}
		r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "other")
		others, _ := filepath.Glob(filepath.Join(set, "other-*"))
		if r.code != exitFailed || len(others) > 0 || !strings.Contains(r.stderr, `is the backup set of "app" (its newest run is app-`) {
			t.Errorf("LATEST %q: another source: exit %d, wrote %v; want %d, nothing written, and why:\n%s", latest, r.code, others, exitFailed, r.stderr)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
}

// TestAttackLostLatestLetsAnotherSourceTakeTheSet: the same for "one source per set":
// with LATEST missing, a run of another source (a cron line with the wrong folder) is taken
// and moves LATEST to its archive; the set's own source is then refused ("the backup set of
// other"), its runs kept for ever as another source's, and every later run of the set fails
// until someone edits LATEST by hand. activate and adopt fall back to the newest run's
// source; create does not.
// Correct: with no LATEST to tell, create checks the source against the newest run and
// refuses another (exit 1, nothing written).
func TestAttackLostLatestLetsAnotherSourceTakeTheSet(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	makeTree(t, filepath.Join(dir, "other"), map[string]node{"o": {content: "o\n"}})
	if err := os.Remove(filepath.Join(set, "LATEST")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "other")
	others, _ := filepath.Glob(filepath.Join(set, "other-*"))
	if r.code == exitComplete || len(others) > 0 {
		t.Errorf("another source's run into the set of app with LATEST missing: exit %d, wrote %v, LATEST %s; want it refused",
			r.code, others, readLatest(t, set))
	}
	if r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"); r.code != exitComplete {
		t.Errorf("the set's own source is now refused: exit %d, %s", r.code, r.stderr)
	}
}

// TestAttackClockAheadOnceFreezesLatest: a host whose clock ran ahead for one run (a
// board without a battery-backed clock booting with a wrong time, a hypervisor resuming a
// VM, NTP stepping it back an hour later) wrote a complete, good backup whose receipt says
// it started an hour from now. Every run after it, with the clock right, is refused
// activation by "LATEST never moves back": each exits 1, keeps its archive, and LATEST stays
// on the stale backup for the whole hour (for days if the clock was days ahead); restore of
// the set keeps restoring the old data. adopt refuses a receipt dated more than a minute in
// the future for this very reason (a future run made the set's newest for ever), but a run
// of create itself makes the same state.
// Correct: the order guard only compares runs that are plausible: a LATEST whose run
// started more than the adopt bound (a minute) after this run's start (i.e. in the future by
// this host's clock) does not stop a complete, verified run from moving LATEST (at most a
// warning), as a LATEST whose target is damaged "orders nothing".
func TestAttackClockAheadOnceFreezesLatest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	first := readLatest(t, set)
	// The first run's clock was an hour ahead: its receipt says so.
	path := filepath.Join(set, first+".receipt.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"started_at", "finished_at"} {
		ts, err := time.Parse(time.RFC3339Nano, rc[k].(string))
		if err != nil {
			t.Fatal(err)
		}
		rc[k] = ts.Add(time.Hour).Format(time.RFC3339Nano)
	}
	data, _ = json.Marshal(rc)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app", "a"), []byte("new content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	if latest := readLatest(t, set); latest == first || r.code != exitComplete {
		t.Errorf("one run with a clock an hour ahead freezes LATEST: a good run exits %d and LATEST stays on %s\n%s", r.code, latest, r.stderr)
	}
}

// TestAttackFailedTypoRunClaimsNewSet: the first run into a new set names a source that
// does not exist (a typo in the timer's unit, a mount not there yet). It fails (exit 1)
// having backed up nothing: the set holds only that run's failed receipt, no archive, and
// has never had a LATEST. The user fixes the path; every run of the right source is now
// refused, exit 1, "… is the backup set of "appp" (its newest run is appp-….zip, and
// LATEST is missing or damaged)", naming an archive that never existed. The set can never
// be backed up again until someone deletes the receipt by hand. The Witness fix ("with
// LATEST missing the set's newest run decides the source") takes a run that wrote nothing
// as the set's identity.
// Correct: a run that left no archive (a failed receipt alone) says nothing about what the
// set is: a set that has never held an archive takes any source, as an empty one does.
func TestAttackFailedTypoRunClaimsNewSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "appp"), exitFailed)
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	if r.code != exitComplete {
		t.Errorf("a failed run that wrote no archive claims the new set for a source that does not exist: the right source exits %d\n%s", r.code, r.stderr)
	}
}

// TestAttackAdoptedSkewFailsNextCreate: adopt accepts a receipt up to a minute in the
// future ("check the clock of the machine that ran it" only beyond that: a minute of skew
// between hosts is tolerated), and adopt --activate makes it LATEST. But create tolerates
// no skew at all: every run of the set for the next ~50 s (a timer every minute, a retry
// after a failed run) exits 1 "LATEST not moved: … which started later … (check the
// clock)", though both clocks are within the skew adopt itself declared acceptable.
// Correct: the order check allows the same skew adopt does (a LATEST at most a minute
// ahead of the new run does not make it "older"), or adopt refuses to activate what create
// would then refuse to move past.
func TestAttackAdoptedSkewFailsNextCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	// Another host, whose clock is 50 s ahead, backed the source up with -o.
	if err := os.WriteFile(filepath.Join(dir, "app", "a"), []byte("from the other host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "out/app.zip", "app"), exitComplete)
	path := filepath.Join(dir, "out", "app.zip.receipt.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"started_at", "finished_at"} {
		ts, err := time.Parse(time.RFC3339Nano, rc[k].(string))
		if err != nil {
			t.Fatal(err)
		}
		rc[k] = ts.Add(50 * time.Second).Format(time.RFC3339Nano)
	}
	data, _ = json.Marshal(rc)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "adopt", "--activate", set, "out/app.zip"), exitComplete)
	adopted := readLatest(t, set)
	if err := os.WriteFile(filepath.Join(dir, "app", "a"), []byte("newer, here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	if r.code != exitComplete || readLatest(t, set) == adopted {
		t.Errorf("after adopting a run 50 s ahead (within adopt's minute), create exits %d and LATEST stays on %s\n%s", r.code, readLatest(t, set), r.stderr)
	}
}
