package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackExcludeRuleNotUTF8: an exclude pattern is bytes, as a name is (an
// --exclude-from file written in Latin-1 says "caf\xe9*"), but the receipt, the manifest and
// the --json-lines events gave its rule only as a JSON string, where each byte that is not
// UTF-8 is U+FFFD: the rules "a\xff*" and "a\xfe*" were both "a\ufffd*", and a reader could
// neither tell which rule left out a path nor match it again. docs/formats.md: a name that
// is not UTF-8 has a _b64 twin.
func TestAttackExcludeRuleNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"a\xff1": {content: "1"}, "a\xfe2": {content: "2"}, "keep": {content: "3"}})
	rules := filepath.Join(dir, "rules")
	if err := os.WriteFile(rules, []byte("a\xff*\na\xfe*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--json-lines", "--exclude-from", rules, "-o", arch, "src")
	mustExit(t, r, exitComplete)
	want := map[string]string{"src/a\xff1": "a\xff*", "src/a\xfe2": "a\xfe*"}

	var receipt struct {
		Excluded []map[string]string `json:"excluded"`
	}
	data, err := os.ReadFile(arch + ".receipt.json")
	if err == nil {
		err = json.Unmarshal(data, &receipt)
	}
	if err != nil {
		t.Fatal(err)
	}
	checkRules(t, "receipt", receipt.Excluded, want)

	var manifest struct {
		Excluded []map[string]string `json:"excluded"`
	}
	if err := json.Unmarshal([]byte(readZip(t, arch)[".backup-manifest.json"]), &manifest); err != nil {
		t.Fatal(err)
	}
	checkRules(t, "manifest", manifest.Excluded, want)

	var events []map[string]string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("--json-lines line %q: %v", sc.Text(), err)
		}
		if ev["kind"] != "excluded" && ev["event"] != "excluded" && ev["type"] != "excluded" {
			continue
		}
		rec := map[string]string{}
		for k, v := range ev {
			if s, ok := v.(string); ok {
				rec[k] = s
			}
		}
		events = append(events, rec)
	}
	checkRules(t, "--json-lines", events, want)
}

// checkRules checks that records (excluded paths) name each path of want with its rule,
// read from rule_b64 when the record has one (whose rule must then show it).
func checkRules(t *testing.T, what string, records []map[string]string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, rec := range records {
		rule := rec["rule"]
		if b64, ok := rec["rule_b64"]; ok {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatalf("%s: rule_b64 %q: %v", what, b64, err)
			}
			if shown := strings.ToValidUTF8(string(raw), "\uFFFD"); rule != shown {
				t.Errorf("%s: rule %q, want %q beside rule_b64", what, rule, shown)
			}
			rule = string(raw)
		}
		got[rawPath(t, rec)] = rule
	}
	for path, rule := range want {
		if got[path] != rule {
			t.Errorf("%s: %q excluded by rule %q, want %q", what, path, got[path], rule)
		}
	}
}
