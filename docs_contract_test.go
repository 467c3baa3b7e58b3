package main

import (
	"encoding/json"
	"path/filepath"
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
