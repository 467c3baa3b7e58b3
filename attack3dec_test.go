package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/backupset/s3store/s3test"
)

// The third adversarial pass of December 2nd (attack3dec): each test is a defect found by
// trying to break the fixes of the second, failing until it is fixed.

// TestAttack3DecDotDotOutputFollowsSymlink: an output path holding ".." is now resolved by
// absPath with every symlink followed, the last name's included. docs/create.md: "a symlink
// to a regular file is replaced, as ever" (pathcheck: "A symlink there is replaced, not
// followed"), and so it is for -o backups/app.zip or --receipt backups/r.json; but the same
// outputs named from a sibling folder, ../backups/app.zip, ../backups/r.json (a ".." in
// front, as any script run from its own folder names them), are written through the link:
// the file it points to, outside the folder named, is replaced (the receipt needs no
// --force at all), and the link stays as it was.
func TestAttack3DecDotDotOutputFollowsSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"src/app/a":       {content: "hi\n"},
		"keep/r.json":     {content: "the user's own file\n"},
		"keep/user.zip":   {content: "the user's own zip\n"},
		"backups/r.json":  {kind: "symlink", content: "../keep/r.json"},
		"backups/app.zip": {kind: "symlink", content: "../keep/user.zip"},
		"work":            {kind: "dir"},
	})
	work := filepath.Join(dir, "work")
	runs := []struct {
		args   []string
		link   string // the output's name, a symlink
		target string // the user's file it points to
	}{
		{[]string{"create", "-q", "-o", "../backups/b.zip", "--receipt", "../backups/r.json", "../src/app"}, "backups/r.json", "keep/r.json"},
		{[]string{"create", "-q", "--force", "-o", "../backups/app.zip", "../src/app"}, "backups/app.zip", "keep/user.zip"},
	}
	for _, run := range runs {
		want := readFileString(t, filepath.Join(dir, run.target))
		r := backup(t, runOpts{dir: work}, run.args...)
		mustExit(t, r, exitComplete)
		if got := readFileString(t, filepath.Join(dir, run.target)); got != want {
			t.Errorf("backup %s replaced %s, the file the symlink %s points to (now %d bytes), instead of the symlink", strings.Join(run.args, " "), run.target, run.link, len(got))
		}
		if info, err := os.Lstat(filepath.Join(dir, run.link)); err != nil || info.Mode()&os.ModeSymlink != 0 {
			t.Errorf("backup %s left %s a symlink (%v): the output was not written at the name given", strings.Join(run.args, " "), run.link, err)
		}
	}
}

// TestAttack3DecDotDotSourceSymlinkRenamed: a SOURCE that is a symlink to a folder is
// stored under its own base name (README: "under the base name of each SOURCE"), mylink/a;
// named with a ".." anywhere before it (sub/../mylink, the same folder to the kernel), it is
// now stored under its target's name, data/a, since absPath follows every link of a path
// holding "..". The same SOURCE then gives other archives, and in a backup set the second
// run fails (exit 1: "the backup set of "mylink" … back up "data" into a folder of its own").
func TestAttack3DecDotDotSourceSymlinkRenamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"real/data/a": {content: "hi\n"},
		"mylink":      {kind: "symlink", content: "real/data"},
		"sub":         {kind: "dir"},
	})
	for _, src := range []string{"mylink", "sub/../mylink"} {
		arch := filepath.Join(dir, strings.ReplaceAll(src, "/", "_")+".zip")
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, src), exitComplete)
		if _, ok := readZip(t, arch)["mylink/a"]; !ok {
			t.Errorf("SOURCE %s is not stored under its base name mylink: %v", src, keysOf(readZip(t, arch)))
		}
	}
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "mylink"), exitComplete)
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "sub/../mylink"); r.code != exitComplete {
		t.Errorf("the set's SOURCE named as sub/../mylink: exit %d, %q", r.code, r.stderr)
	}
}

func keysOf(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestAttack3DecConfigEndpointPasswordEchoed: the fix of TestAttack2DecEndpointPasswordEchoed
// checks AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL, but the SDK also takes the endpoint from
// the shared config file (endpoint_url in the profile), which docs/s3.md lists among the
// standard ways ("AWS_PROFILE and the shared config files"). An endpoint there holding a
// password is never checked, and when the SDK rejects it the whole URL, password included,
// is echoed in the error, in --json's receipt and in the hooks' BACKUP_ERROR. docs/s3.md:
// "Credentials never appear in receipts, errors or --json".
func TestAttack3DecConfigEndpointPasswordEchoed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	cfg := filepath.Join(dir, "aws-config")
	if err := os.WriteFile(cfg, []byte("[default]\nendpoint_url = http://user:"+s3test.SecretKey+"@127.0.0.1:9/%zz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range (&s3test.Server{Endpoint: "http://127.0.0.1:9"}).Env() {
		if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL_S3=") && !strings.HasPrefix(kv, "AWS_CONFIG_FILE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_MAX_ATTEMPTS=1", "AWS_CONFIG_FILE="+cfg)
	hook := filepath.Join(dir, "hook.out")
	runs := [][]string{
		{"create", "--output-dir", "s3://bucket/set", "--json", "--exec-after", `printf %s "$BACKUP_ERROR" > ` + hook, "app"},
		{"status", "--json", "s3://bucket/set"},
		{"verify", "s3://bucket/set"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir, env: envWithout([]string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE", "AWS_PROFILE"}, env...)}, args...)
		if strings.Contains(r.stdout+r.stderr, s3test.SecretKey) {
			t.Errorf("%s: exit %d; the password of the config file's endpoint_url is printed: stdout %q; stderr %q", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if data, _ := os.ReadFile(hook); strings.Contains(string(data), s3test.SecretKey) {
		t.Errorf("the hook's BACKUP_ERROR holds the endpoint's password: %q", data)
	}
}

// TestAttack3DecSetNamesRawActivateAdopt: the fix of TestAttack2DecSetNamesRawOnTerminal
// quotes a set's archive names in create, verify, status's table and verdict and prune, but
// not in activate ("LATEST -> NAME (complete, was NAME)", with --dry-run too, and "not
// activating NAME: …"), adopt ("adopted PATH as NAME", "PATH is already in the set as NAME")
// or status's note on a hand-made activation ("LATEST is not the newest complete backup
// (NAME is newer)"): a name holding ESC, BEL or CR still drives the terminal or overwrites
// the line a person reads. docs/operations.md: such a name "is printed quoted as Go's %q
// does, wherever a person reads it".
func TestAttack3DecSetNamesRawActivateAdopt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "a\x1b]0;pwned\x07\rb"
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
		for _, out := range []string{r.stdout, r.stderr} {
			for _, line := range strings.Split(out, "\n") {
				if strings.ContainsAny(line, "\x1b\x07\r") {
					t.Errorf("backup %s (exit %d) printed a set's archive name raw: %q", args[0], r.code, line)
				}
			}
		}
	}
}

// TestAttack3DecMetricsSetLabelsCollide: the fix of TestAttack2DecMetricsLabelNotUTF8 writes
// each byte of a set label that is not UTF-8 as the four characters \xNN, "unlike U+FFFD, it
// keeps two such names apart" (metrics.go); but a folder may be named with those four
// characters too. Two sets, b\xffad (the byte 0xff) and `b\xffad` (backslash, x, f, f), get
// the same set label: sets --metrics-file writes every series of both twice with one label
// set, which the Prometheus text format forbids (node_exporter fails the file's series as
// "collected before with the same name and label values"), and an alert on one set's
// health or age may read the other's.
func TestAttack3DecMetricsSetLabelsCollide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "1"}})
	for _, set := range []string{"b\xffad", `b\xffad`} {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "sets", set), "src/app"), exitComplete)
	}
	prom := filepath.Join(dir, "sets.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "sets", "--metrics-file", prom, filepath.Join(dir, "sets")), exitComplete)
	seen := map[string]bool{}
	for _, line := range strings.Split(readFileString(t, prom), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series := line[:strings.LastIndexByte(line, ' ')]
		if seen[series] {
			t.Errorf("sets --metrics-file wrote the series %s twice: the sets b\\xffad and `b\\xffad` have one label", series)
		}
		seen[series] = true
	}
}

// TestAttack3DecS3SourceControlCharNeverActivated: a set's SOURCE whose base name holds a
// control character that XML 1.0 cannot carry (ESC, BEL: a bucket's listing is XML) is not
// refused in a set in a bucket, yet no run of it can ever be activated: the listing gives
// the archive's name back with U+FFFD (or, from AWS, not at all), so the run is refused as
// belonging to another source ("… is the backup set of "a\ufffdb""), every run writes an
// archive and a receipt and exits 1, LATEST never appears, and status, verify and prune
// refuse the set. docs/sets.md: a SOURCE whose name cannot name a set's archives is refused
// (exit 2, nothing written), as the fix of TestAttack2DecSetSourceNotUTF8 now does for a
// name that is not UTF-8. The refusal also prints the name raw ("LATEST not moved: not
// activating a\x1bb-….zip"), ESC and all.
func TestAttack3DecS3SourceControlCharNeverActivated(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	name := "a\x1bb"
	makeTree(t, filepath.Join(dir, name), map[string]node{"f": {content: "1"}})
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, name)
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.ContainsAny(line, "\x1b") {
			t.Errorf("create printed the archive's name raw: %q", line)
		}
	}
	switch r.code {
	case exitComplete:
		if st := backup(t, runOpts{dir: dir, env: s.env}, "status", s.loc); st.code != exitComplete {
			t.Errorf("status of the set after a complete run: exit %d, %q", st.code, st.stderr)
		}
	case exitUsage:
		if got, _ := filepath.Glob(filepath.Join(s.dir, "*")); len(got) > 0 {
			t.Errorf("refused with exit 2, but the set holds %q", got)
		}
	default:
		got, _ := filepath.Glob(filepath.Join(s.dir, "*"))
		t.Errorf("create into a set in a bucket from SOURCE %q: exit %d (%q), the set holds %q; want the run activated (exit 0), or the SOURCE refused before anything is written (exit 2)", name, r.code, r.stderr, got)
	}
}

// TestAttack3DecSetsJSONNamesNotUTF8: the fix of TestAttack2DecJSONNamesNotUTF8 gives list's
// and restore's names a _b64 twin, but sets --json still gives each set's folder only as a
// plain JSON string: two sets s\xffet and s\xfeet of one location are both
// "…/s\ufffdet", and a program reading the JSON (to run status on the unhealthy one, to
// page about it) cannot tell them apart or name either. docs/formats.md: "Every JSON record
// is UTF-8; a name that is not has a _b64 twin". status --json's "dir" and prune --json's
// "dir" lose the bytes the same way.
func TestAttack3DecSetsJSONNamesNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "1"}})
	for _, set := range []string{"s\xffet", "s\xfeet"} {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "sets", set), "src/app"), exitComplete)
	}
	r := backup(t, runOpts{dir: dir}, "sets", "--json", filepath.Join(dir, "sets"))
	mustExit(t, r, exitComplete)
	var sets []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sets); err != nil {
		t.Fatalf("sets --json: %v: %q", err, r.stdout)
	}
	seen := map[string]bool{}
	for _, s := range sets {
		key := ""
		for k, v := range s {
			if k == "set" || strings.HasSuffix(k, "_b64") {
				key += fmt.Sprintf("%s=%v;", k, v)
			}
		}
		if seen[key] {
			t.Errorf("sets --json gives two sets as %q: the folders s\\xffet and s\\xfeet are lost", key)
		}
		seen[key] = true
	}
}

// TestAttack3DecLatestNameRaw: LATEST is one line of set (or bucket) text. A LATEST naming
// an archive the set does not hold is reported by status, verify, list, prune and create as
// "LATEST: names NAME: the archive is missing", and create's refusal of another source as
// "(LATEST names NAME)", with NAME as LATEST holds it: ESC, BEL and CR reach the terminal
// ("\r" overwrites the line a person reads), where the fix of
// TestAttack2DecSetNamesRawOnTerminal quotes every other archive name. docs/operations.md:
// "Text that embeds a name (a reason, an error) has such bytes escaped the same way, so no
// name can forge a line or drive the terminal".
func TestAttack3DecLatestNameRaw(t *testing.T) {
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
		for _, out := range []string{r.stdout, r.stderr} {
			for _, line := range strings.Split(out, "\n") {
				if strings.ContainsAny(line, "\x1b\x07\r") {
					t.Errorf("backup %s (exit %d) printed LATEST's name raw: %q", args[0], r.code, line)
				}
			}
		}
	}
}

// TestAttack3DecCreatePrunedNamesRaw: create --keep-* in a set prints a line for each backup
// it prunes ("  deleted NAME (complete, not kept by any rule)") with NAME raw, where prune's
// own decisions quote it since the fix of TestAttack2DecSetNamesRawOnTerminal: an archive
// name holding ESC, BEL or CR (from a SOURCE's base name) drives the terminal after every
// nightly run.
func TestAttack3DecCreatePrunedNamesRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "a\x1b]0;pwned\x07\rb"
	makeTree(t, filepath.Join(dir, "src", name), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	src := filepath.Join("src", name)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, src), exitComplete)
	r := backup(t, runOpts{dir: dir}, "create", "--keep-last", "1", "--output-dir", set, src)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr+r.stdout, "deleted") {
		t.Fatalf("create --keep-last 1 pruned nothing: %q", r.stderr)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		for _, line := range strings.Split(out, "\n") {
			if strings.ContainsAny(line, "\x1b\x07\r") {
				t.Errorf("create --keep-last printed a pruned archive's name raw: %q", line)
			}
		}
	}
}
