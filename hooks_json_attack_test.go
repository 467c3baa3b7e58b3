package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackHooksJSONAfterHooksWithoutReceipt: operations.md says create records every hook
// (before and after) in its receipt and that --json and --json-lines print it with them. A
// run that wrote no receipt (a before hook that failed, another source's set) printed its
// failed receipt on stdout with the before hooks and without the after hooks that ran, so a
// wrapper reading --json could not see that its notification failed. Correct: the after
// hooks are in what --json and --json-lines print, whether or not a receipt file was written.
func TestAttackHooksJSONAfterHooksWithoutReceipt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	for _, flag := range []string{"--json", "--json-lines"} {
		r := backup(t, runOpts{dir: dir}, "create", "-q", flag, "--output-dir", set,
			"--exec-before", "exit 3", "--exec-after", "exit 5", "app")
		mustExit(t, r, exitFailed)
		out := strings.TrimSpace(r.stdout)
		if flag == "--json-lines" {
			lines := strings.Split(out, "\n")
			var last struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
				t.Fatalf("%s: last line %q: %v", flag, lines[len(lines)-1], err)
			}
			out = string(last.Result)
		}
		var rc struct {
			Hooks []struct {
				When     string `json:"when"`
				ExitCode int    `json:"exit_code"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal([]byte(out), &rc); err != nil {
			t.Fatalf("%s: %v in %q", flag, err, out)
		}
		var got []string
		for _, h := range rc.Hooks {
			got = append(got, h.When)
		}
		if strings.Join(got, ",") != "before,after" || rc.Hooks[1].ExitCode != 5 {
			t.Errorf("%s: hooks %+v; want the before hook and the after hook (exit 5)", flag, rc.Hooks)
		}
	}
}
