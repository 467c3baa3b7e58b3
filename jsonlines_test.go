package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"backup/backupset"
)

// readLines parses a --json-lines stream line by line, as a wrapper does: every line one
// object with a type, "start" first and "result" last.
func readLines(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var events []map[string]any
	for line := range strings.Lines(stream) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if _, ok := ev["type"].(string); !ok {
			t.Errorf("line without a type: %q", line)
		}
		events = append(events, ev)
	}
	if len(events) < 2 || events[0]["type"] != "start" || events[len(events)-1]["type"] != "result" {
		t.Fatalf("stream does not run from start to result:\n%s", stream)
	}
	return events
}

func eventsOf(events []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range events {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// TestCreateJSONLines: each skipped and excluded path is a line of its own, and the last
// line's result is the receipt file, field for field.
func TestCreateJSONLines(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{
		"a.txt": {content: "hello"}, "ctl.sock": {kind: "socket"}, "queue": {kind: "fifo"},
		"link": {kind: "symlink", content: "a.txt"}, "cache/x.tmp": {content: "x"},
	})
	arch := filepath.Join(dir, "a.zip")
	r := backup(t, runOpts{}, "create", "--json-lines", "-x", "cache", "-o", arch, src)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	events := readLines(t, r.stdout)
	var skipped []string
	for _, ev := range eventsOf(events, "skipped") {
		skipped = append(skipped, ev["path"].(string)+" "+ev["kind"].(string))
	}
	want := []string{"app/ctl.sock socket", "app/link symlink", "app/queue fifo"}
	if strings.Join(skipped, ",") != strings.Join(want, ",") {
		t.Errorf("skipped events %q, want %q", skipped, want)
	}
	if ex := eventsOf(events, "excluded"); len(ex) != 1 || ex[0]["path"] != "app/cache" || ex[0]["rule"] != "cache" {
		t.Errorf("excluded events %v, want app/cache by rule cache", ex)
	}
	for _, ev := range eventsOf(events, "progress") {
		if _, ok := ev["bytes"].(float64); !ok {
			t.Errorf("progress event without bytes: %v", ev)
		}
	}
	data, err := os.ReadFile(arch + ".receipt.json")
	if err != nil {
		t.Fatal(err)
	}
	var receipt any
	if err := json.Unmarshal(data, &receipt); err != nil {
		t.Fatal(err)
	}
	if got := events[len(events)-1]["result"]; !reflect.DeepEqual(got, receipt) {
		t.Errorf("last line's result:\n%v\nreceipt file:\n%v", got, receipt)
	}
	if !strings.Contains(r.stderr, "backup: complete:") {
		t.Errorf("stderr lacks the summary: %q", r.stderr)
	}
}

// TestJSONLinesCommands: verify, restore and prune end their streams with the result that
// --json prints.
func TestJSONLinesCommands(t *testing.T) {
	dir := t.TempDir()
	src, set := filepath.Join(dir, "app"), filepath.Join(dir, "set")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})
	if r := backup(t, runOpts{}, "create", "-q", "--output-dir", set, src); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	tests := []struct {
		name  string
		args  []string
		field string // a field of the result
		want  any
	}{
		{"verify", []string{"verify", set}, "ok", true},
		{"restore", []string{"restore", set, filepath.Join(dir, "out")}, "status", "complete"},
		{"prune", []string{"prune", "--keep-last", "1", set}, "kept", 1.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := backup(t, runOpts{}, append(tt.args[:1:1], append([]string{"--json-lines"}, tt.args[1:]...)...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			events := readLines(t, r.stdout)
			result, _ := events[len(events)-1]["result"].(map[string]any)
			if result[tt.field] != tt.want {
				t.Errorf("result %s = %v, want %v", tt.field, result[tt.field], tt.want)
			}
		})
	}
}

// TestVerbose: -v lists each stored path on stderr, folders with a slash, and leaves stdout
// alone.
func TestVerbose(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}, "sub/b.txt": {content: "b"}, "s": {kind: "socket"}})
	r := backup(t, runOpts{}, "create", "-v", "-o", filepath.Join(dir, "a.zip"), src)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", r.code, r.stdout, r.stderr)
	}
	for _, line := range []string{"app/\n", "app/a.txt\n", "app/sub/\n", "app/sub/b.txt\n"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "app/s\n") {
		t.Errorf("stderr lists the skipped socket as archived:\n%s", r.stderr)
	}
}

// TestJSONLinesProgress: a run that lasts (each open slowed by strace) sends progress lines,
// with the totals once its scan has counted them.
func TestJSONLinesProgress(t *testing.T) {
	mustTool(t, "strace")
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree := map[string]node{}
	for i := range 12 {
		tree[fmt.Sprintf("f%02d", i)] = node{content: strings.Repeat("x", 1000)}
	}
	makeTree(t, src, tree)
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=openat", "-e", "inject=openat:delay_enter=100000",
		binary, "create", "--json-lines", "-j", "1", "-o", filepath.Join(dir, "a.zip"), src)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	progress := eventsOf(readLines(t, string(out)), "progress")
	if len(progress) == 0 {
		t.Fatalf("no progress line in:\n%s", out)
	}
	last := progress[len(progress)-1]
	if last["total_files"] != 12.0 || last["total_bytes"] != 12000.0 {
		t.Errorf("last progress line %v, want total_files 12 and total_bytes 12000", last)
	}
}

// TestPruneJSONFailures: whatever ends a prune once its flags parse (a set that is locked,
// missing or refused for its damaged LATEST, a failed --exec-before), --json and
// --json-lines still print their document, and it says why in "error": a wrapper must not
// read "deleted 0" as a prune that found nothing to do.
func TestPruneJSONFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set, damaged, locked := filepath.Join(dir, "set"), filepath.Join(dir, "damaged"), filepath.Join(dir, "locked")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	for _, s := range []string{set, damaged, locked} {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", s, "app"), exitComplete)
	}
	makeTree(t, damaged, map[string]node{"LATEST": {content: "x\ny\n"}})
	lock, err := backupset.Acquire(t.Context(), backupset.Folder{Dir: locked}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	tests := []struct {
		name  string
		args  []string
		code  int
		error string // in the result's error
	}{
		{"locked", []string{locked}, exitLocked, "another backup of this set is running"},
		{"missing", []string{filepath.Join(dir, "nosuch")}, exitFailed, "no such file or directory"},
		{"damaged LATEST", []string{damaged}, exitFailed, "has more than one line"},
		{"exec-before", []string{"--exec-before", "exit 3", set}, exitFailed, "exit status 3"},
	}
	for _, tt := range tests {
		for _, mode := range []string{"--json", "--json-lines"} {
			t.Run(tt.name+" "+mode, func(t *testing.T) {
				r := backup(t, runOpts{}, append([]string{"prune", mode, "--keep-last", "1"}, tt.args...)...)
				mustExit(t, r, tt.code)
				var result map[string]any
				if mode == "--json" {
					if err := json.Unmarshal([]byte(r.stdout), &result); err != nil {
						t.Fatalf("--json printed %q: %v", r.stdout, err)
					}
				} else {
					events := readLines(t, r.stdout)
					result, _ = events[len(events)-1]["result"].(map[string]any)
				}
				if e, _ := result["error"].(string); !strings.Contains(e, tt.error) {
					t.Errorf("result's error %q, want it to say %q", e, tt.error)
				}
			})
		}
	}
}

// TestAttackDocsProblemEventKind: docs/operations.md gives a --json-lines "problem" line a
// kind (verify: problem; restore: refused, damaged or failed), by which a wrapper tells an
// entry restore refused from one it found damaged. The lines had entry and reason only: the
// entry's own JSON form (with entry_b64) took the place of the whole event's.
func TestAttackDocsProblemEventKind(t *testing.T) {
	dir := t.TempDir()
	src, archivePath := filepath.Join(dir, "app"), filepath.Join(dir, "a.zip")
	makeTree(t, src, map[string]node{"big.txt": {content: strings.Repeat("some text to deflate\n", 4000)}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "-o", archivePath, src), exitComplete)
	corruptAt(t, archivePath, dataOffset(t, archivePath, "app/big.txt"))
	for _, tt := range []struct {
		args []string
		kind string
	}{
		{[]string{"verify", "--json-lines", archivePath}, "problem"},
		{[]string{"restore", "--json-lines", archivePath, filepath.Join(dir, "out")}, "damaged"},
	} {
		r := backup(t, runOpts{}, tt.args...)
		mustExit(t, r, exitFailed)
		var kinds []any
		for _, p := range eventsOf(readLines(t, r.stdout), "problem") {
			if p["entry"] == "app/big.txt" {
				kinds = append(kinds, p["kind"])
			}
		}
		if len(kinds) != 1 || kinds[0] != tt.kind {
			t.Errorf("%s --json-lines: the problem lines of app/big.txt have kinds %v, want one, %q", tt.args[0], kinds, tt.kind)
		}
	}
}

// corruptAt overwrites 4 bytes of the file at path from off.
func corruptAt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("XXXX"), off); err != nil {
		t.Fatal(err)
	}
}
