package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocsJSONDryRunAlwaysPresent: docs/sets.md lists `dry_run` among the fields of
// `prune --json` (`dir`, `dry_run`, `deleted`, `kept`, `runs`) and of `activate --json`
// (`dir`, `archive`, `previous`, `dry_run`, `status`), as adopt's `already_in_set` and
// `activated` are always there. A script reading `.dry_run` of a real run must get false,
// not a missing field; it was left out whenever it was false.
func TestDocsJSONDryRunAlwaysPresent(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "a"}})
	set := filepath.Join(dir, "set")
	for range 2 {
		if r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"); r.code != 0 {
			t.Fatalf("create: exit %d, %s", r.code, r.stderr)
		}
	}
	names, err := filepath.Glob(filepath.Join(set, "app-*.zip"))
	if err != nil || len(names) != 2 {
		t.Fatalf("the set's archives: %v, %v", names, err)
	}
	if filepath.Base(names[0]) == readLatest(t, set) {
		names[0] = names[1]
	}
	names[0] = filepath.Base(names[0]) // the older run, which LATEST does not name
	hasDryRun := func(what, out string, want bool) {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%s: %v in %q", what, err, out)
		}
		got, ok := m["dry_run"]
		if !ok {
			t.Errorf("%s: no dry_run field in %s", what, out)
			return
		}
		if got != want {
			t.Errorf("%s: dry_run %v, want %v", what, got, want)
		}
	}
	for _, dry := range []bool{true, false} {
		args := []string{"activate", "--json", set, names[0]}
		if dry {
			args = []string{"activate", "--json", "--dry-run", set, names[0]}
		}
		r := backup(t, runOpts{}, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, %s", args, r.code, r.stderr)
		}
		hasDryRun(strings.Join(args[:3], " "), r.stdout, dry)
	}
	for _, dry := range []bool{true, false} {
		args := []string{"prune", "--json", "--keep-last", "1", set}
		if dry {
			args = append([]string{"prune", "--dry-run"}, args[1:]...)
		}
		r := backup(t, runOpts{}, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, %s", args, r.code, r.stderr)
		}
		hasDryRun(strings.Join(args[:2], " "), r.stdout, dry)
	}
	r := backup(t, runOpts{}, "prune", "--json-lines", "--keep-last", "1", set)
	if r.code != 0 {
		t.Fatalf("prune --json-lines: exit %d, %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last struct {
		Type   string          `json:"type"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" {
		t.Fatalf("prune --json-lines: last line %q (%v)", lines[len(lines)-1], err)
	}
	hasDryRun("prune --json-lines result", string(last.Result), false)
}

// TestDocsVerifyJSONEncryptedWhenUnread: verify --json's `encrypted` says the archive is an
// age file (docs/verify-list.md). An encrypted archive that none of the identities given
// opens (exit 1, `no identity matches`) was answered with "encrypted": false, as if it were
// a plain zip that could not be read; so was one whose ciphertext is cut short.
func TestDocsVerifyJSONEncryptedWhenUnread(t *testing.T) {
	t.Parallel()
	key, other := newAgeKey(t), newAgeKey(t)
	dir, archive := sealedArchive(t, key)
	check := func(what string, r result) {
		t.Helper()
		mustExit(t, r, exitFailed)
		var out struct {
			OK              *bool `json:"ok"`
			Encrypted       *bool `json:"encrypted"`
			ContentsChecked *bool `json:"contents_checked"`
			Problems        []struct {
				Reason string `json:"reason"`
			} `json:"problems"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%s: %v in %q", what, err, r.stdout)
		}
		if out.OK == nil || *out.OK || out.Encrypted == nil || !*out.Encrypted || out.ContentsChecked == nil || *out.ContentsChecked || len(out.Problems) != 1 {
			t.Errorf("%s: %s, want ok false, encrypted true, contents_checked false, one problem", what, r.stdout)
		}
	}
	check("verify --json -i (another key)", backup(t, runOpts{dir: dir}, "verify", "--json", "-i", other.identity, archive))
	data := must(os.ReadFile(archive))
	cut := filepath.Join(dir, "cut.zip.age")
	if err := os.WriteFile(cut, data[:len(data)-40], 0o600); err != nil {
		t.Fatal(err)
	}
	check("verify --json -i of a cut archive", backup(t, runOpts{dir: dir}, "verify", "--json", "-i", key.identity, cut))
}

// TestDocsVerifyJSONAnswersBadReceipt: a receipt that cannot be read fails verify (exit 1,
// README), and --json and --json-lines answer every way out: docs/operations.md says the
// last line of --json-lines is always the `result`, and verify --json gives an `entry` of ""
// for a problem of the archive as a whole. A receipt that was not JSON printed nothing on
// stdout with --json, and only the `start` line with --json-lines.
func TestDocsVerifyJSONAnswersBadReceipt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "a"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	if err := os.WriteFile(filepath.Join(dir, "a.zip.receipt.json"), []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		OK       *bool `json:"ok"`
		Problems []struct {
			Entry  *string `json:"entry"`
			Reason string  `json:"reason"`
		} `json:"problems"`
	}
	check := func(what, text string) {
		t.Helper()
		var out answer
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("%s: %v in %q", what, err, text)
		}
		if out.OK == nil || *out.OK || len(out.Problems) != 1 || out.Problems[0].Entry == nil || *out.Problems[0].Entry != "" || !strings.Contains(out.Problems[0].Reason, "not a receipt") {
			t.Errorf("%s: %s, want ok false and one problem of the archive as a whole naming the receipt", what, text)
		}
	}
	r := backup(t, runOpts{dir: dir}, "verify", "--json", "a.zip")
	mustExit(t, r, exitFailed)
	check("verify --json", r.stdout)
	r = backup(t, runOpts{dir: dir}, "verify", "--json-lines", "a.zip")
	mustExit(t, r, exitFailed)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last struct {
		Type   string          `json:"type"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" {
		t.Fatalf("verify --json-lines: last line %q (%v), want the result", lines[len(lines)-1], err)
	}
	check("verify --json-lines result", string(last.Result))
}

// TestDocsRestoreHelpNamesTheUndo: restore --help names the command that undoes a restore
// --force, and docs/restore.md says it is exactly `backup restore --force --same-permissions
// --xattrs BEFORE-STATE DEST`, as the restore prints it. The help named `restore --force
// --xattrs BEFORE-STATE DEST`, without --same-permissions, which the undo needs to give back
// a setuid bit or a capability it replaced.
func TestDocsRestoreHelpNamesTheUndo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "a"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	makeTree(t, dir, map[string]node{"dest/app/a.txt": {content: "changed"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "a.zip", "dest")
	mustExit(t, r, exitComplete)
	_, undo, ok := strings.Cut(r.stderr, "(undo: backup ")
	if !ok {
		t.Fatalf("restore --force printed no undo: %q", r.stderr)
	}
	// restore --force --same-permissions --xattrs /…/dest-before-restore-….zip /…/dest)
	fields := strings.Fields(undo)
	var flags []string
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") {
			break
		}
		flags = append(flags, f)
	}
	want := "restore " + strings.Join(flags, " ") + " BEFORE-STATE DEST"
	if fields[0] != "restore" || !slices.Contains(flags, "--same-permissions") {
		t.Fatalf("undo %q: want restore with --same-permissions", undo)
	}
	help := backup(t, runOpts{}, "restore", "--help")
	mustExit(t, help, exitComplete)
	if !strings.Contains(strings.Join(strings.Fields(help.stdout), " "), want) {
		t.Errorf("restore --help does not name the undo as printed, %q:\n%s", want, help.stdout)
	}
}

// TestDocsOutputTrailingSlash: -o PATH is "an existing directory means the default name
// inside it" (docs/create.md), and a path is taken as the kernel takes it. A trailing slash
// says PATH is a folder: `-o backups/` where backups does not exist wrote an archive file
// named backups (and backups.receipt.json), `--force -o a.zip/` replaced the file a.zip,
// and `--receipt r/` wrote a receipt file named r. Each is now refused as the kernel
// refuses such a path (exit 1, nothing written); an existing folder with the slash still
// gets the default name inside.
func TestDocsOutputTrailingSlash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "a"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	before := must(os.ReadFile(filepath.Join(dir, "a.zip")))
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "b"}}) // a run now writes other bytes
	for _, tt := range []struct {
		args []string
		gone []string // what must not be there afterwards
	}{
		{[]string{"-o", "backups/"}, []string{"backups", "backups.receipt.json"}},
		{[]string{"--force", "-o", "a.zip/"}, nil},
		{[]string{"-o", "b.zip", "--receipt", "r/"}, []string{"r", "b.zip", "b.zip.receipt.json"}},
	} {
		r := backup(t, runOpts{dir: dir}, append(append([]string{"create", "-q"}, tt.args...), "app")...)
		if r.code != exitFailed || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("create %v: exit %d, stderr %q; want exit 1 and one line", tt.args, r.code, r.stderr)
		}
		for _, name := range tt.gone {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				t.Errorf("create %v made %s", tt.args, name)
			}
		}
	}
	if got := must(os.ReadFile(filepath.Join(dir, "a.zip"))); string(got) != string(before) {
		t.Error("create --force -o a.zip/ replaced the file a.zip")
	}
	os.Mkdir(filepath.Join(dir, "out"), 0o755)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "out/", "app"), exitComplete)
	onlyFile(t, filepath.Join(dir, "out"), ".zip")
}

// TestDocsSourceNames holds docs/create.md's names of a SOURCE: its base name, a symlink's
// own name, `.` the name of the folder it is, and `/` root.
func TestDocsSourceNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"srv/app/a.txt": {content: "a"}})
	if err := os.Symlink("srv/app", filepath.Join(dir, "current")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cwd, source, want string
	}{
		{dir, "srv/app", "app/a.txt"},
		{dir, "current", "current/a.txt"},
		{filepath.Join(dir, "srv", "app"), ".", "app/a.txt"},
		{dir, "srv/app/.", "app/a.txt"},
	} {
		r := backup(t, runOpts{dir: tt.cwd}, "create", "-q", "-o", filepath.Join(t.TempDir(), "a.zip"), "--json", tt.source)
		mustExit(t, r, exitComplete)
		var rc struct {
			Archive struct{ Path string } `json:"archive"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rc); err != nil {
			t.Fatal(err)
		}
		list := backup(t, runOpts{}, "list", rc.Archive.Path)
		mustExit(t, list, exitComplete)
		if !slices.Contains(strings.Split(list.stdout, "\n"), tt.want) {
			t.Errorf("create %s in %s stored %q, want %s", tt.source, tt.cwd, list.stdout, tt.want)
		}
	}
	// / is stored under root/: a dry run that leaves out everything below it names the rest.
	r := backup(t, runOpts{}, "create", "-n", "--json", "-x", "/*", "/")
	mustExit(t, r, exitComplete)
	var rc struct {
		Excluded []struct{ Path string } `json:"excluded"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rc); err != nil || len(rc.Excluded) == 0 {
		t.Fatalf("create -n -x '/*' /: %v, %q", err, r.stdout)
	}
	for _, e := range rc.Excluded {
		if !strings.HasPrefix(e.Path, "root/") {
			t.Errorf("/ stored %s, want it below root/", e.Path)
		}
	}
}

// TestDocsAdoptReceiptHint: adopt reads ARCHIVE's receipt from `--receipt PATH`, else
// ARCHIVE.receipt.json (docs/sets.md). A receipt missing beside ARCHIVE says to give it with
// --receipt; one given with --receipt that cannot be read said so too, a hint that points
// back at what was just done.
func TestDocsAdoptReceiptHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "a"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	os.Remove(filepath.Join(dir, "a.zip.receipt.json"))
	r := backup(t, runOpts{dir: dir}, "adopt", "set", "a.zip")
	mustExit(t, r, exitFailed)
	oneLine(t, r, "give it with --receipt")
	r = backup(t, runOpts{dir: dir}, "adopt", "--receipt", "nope.json", "set", "a.zip")
	mustExit(t, r, exitFailed)
	oneLine(t, r, "receipt nope.json: no such file or directory")
	if strings.Contains(r.stderr, "give it with --receipt") {
		t.Errorf("adopt --receipt nope.json: %q, a hint to give what was given", r.stderr)
	}
}
