package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackVerifyInterruptedJSONAnswers: verify --json and --json-lines interrupted
// (SIGTERM) while reading a bucket set's archive printed no result: --json nothing at all,
// --json-lines a start line and no end, where operations.md says of every --json-lines
// stream that "the last is result", and that an interrupted command's "--json still
// answers", as create's, restore's and prune's do. Correct: exit 130, one line on stderr,
// and the result (not ok, the problem "interrupted") on stdout, naming the receipt it was
// found against (the answer said "receipt": null, as of an archive without one).
func TestAttackVerifyInterruptedJSONAnswers(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)

	for _, flag := range []string{"--json", "--json-lines"} {
		code, stdout, stderr := interruptAtRequest(t, s, dir, requestOfKind("ranged read"), "verify", flag, s.loc)
		if code != exitInterrupted || stderr != "backup verify: interrupted\n" {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", flag, code, stderr, exitInterrupted, "backup verify: interrupted\n")
		}
		out := strings.TrimSpace(stdout)
		if flag == "--json-lines" {
			lines := strings.Split(out, "\n")
			var last struct {
				Type   string          `json:"type"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" {
				t.Errorf("%s: last line %q (%v); want the result", flag, lines[len(lines)-1], err)
				continue
			}
			out = string(last.Result)
		}
		var res struct {
			Receipt  *string `json:"receipt"`
			OK       *bool   `json:"ok"`
			Problems []struct {
				Reason string `json:"reason"`
			} `json:"problems"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.OK == nil || *res.OK || len(res.Problems) != 1 || res.Problems[0].Reason != "interrupted" {
			t.Errorf("%s: stdout %q (%v); want a result, not ok, its problem \"interrupted\"", flag, stdout, err)
		}
		if res.Receipt == nil || !strings.HasSuffix(*res.Receipt, ".zip.receipt.json") {
			t.Errorf("%s: stdout %q: want the receipt the archive was checked against", flag, stdout)
		}
	}
}

// TestAttackVerifyUnreadableJSONNamesReceipt: verify --json of an archive that cannot be
// read at all (its bytes replaced) said "receipt": null though its receipt was found and
// read; a script could not tell it from an archive that has none. Correct: the answer names
// the receipt, as when the archive is read.
func TestAttackVerifyUnreadableJSONNamesReceipt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	writeFile(t, filepath.Join(dir, "a.zip"), "not a zip at all")

	r := backup(t, runOpts{dir: dir}, "verify", "--json", "a.zip")
	mustExit(t, r, exitFailed)
	var res struct {
		Receipt *string `json:"receipt"`
		OK      bool    `json:"ok"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.OK || res.Receipt == nil || *res.Receipt != "a.zip.receipt.json" {
		t.Errorf("stdout %q (%v); want not ok, receipt \"a.zip.receipt.json\"", r.stdout, err)
	}
}
