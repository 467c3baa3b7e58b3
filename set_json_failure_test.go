package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActivateJSONOnFailure: activate --json answers whatever ended it: refused (an archive
// that is not in the set), locked (another run holds the set) or failed (no set there), each
// a JSON object whose "error" is stderr's line without its prefix, with the exit code of
// the outcome. Once it printed nothing on stdout then, and a script reading it found no JSON.
func TestActivateJSONOnFailure(t *testing.T) {
	t.Parallel()
	dir, set, a, _ := newestSet(t)
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", locked, "app"), exitComplete)
	holdLock(t, locked)
	for _, c := range []struct {
		name, set, archive string
		code               int
		error              string
	}{
		{"not in the set", set, "app-20200101T000000Z.zip", exitFailed, "app-20200101T000000Z.zip"},
		{"no set there", empty, a, exitFailed, "holds no backup set"},
		{"locked", locked, setArchives(t, locked)[0], exitLocked, "locked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := backup(t, runOpts{dir: dir}, "activate", "--json", c.set, c.archive)
			var out struct {
				Dir, Archive, Error string
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != c.code {
				t.Fatalf("exit %d, stdout %q (%v); want %d and a JSON answer\n%s", r.code, r.stdout, err, c.code, r.stderr)
			}
			line := strings.TrimSuffix(strings.TrimPrefix(r.stderr, "backup activate: "), "\n")
			if out.Error != line || !strings.Contains(out.Error, c.error) || out.Dir != c.set || out.Archive != c.archive {
				t.Errorf("answer %+v; want error %q (stderr's line, naming %q), dir %q, archive %q", out, line, c.error, c.set, c.archive)
			}
		})
	}
}

// TestAdoptJSONOnFailure: adopt --json answers whatever ended it but a usage error: an
// archive without its receipt (exit 1), an incomplete backup to activate (exit 1, nothing
// copied), the set locked (exit 4). Once it printed nothing on stdout then.
func TestAdoptJSONOnFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "whole.zip", "app"), exitComplete)
	if err := os.WriteFile(filepath.Join(dir, "bare.zip"), []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, locked := filepath.Join(dir, "set"), filepath.Join(dir, "locked")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", locked, "app"), exitComplete)
	holdLock(t, locked)
	for _, c := range []struct {
		name, set, archive string
		code               int
		error              string
	}{
		{"no receipt", set, "bare.zip", exitFailed, "give it with --receipt"},
		{"locked", locked, "whole.zip", exitLocked, "locked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := backup(t, runOpts{dir: dir}, "adopt", "--json", c.set, c.archive)
			var out struct {
				Dir, From, Error string
				Activated        bool
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != c.code {
				t.Fatalf("exit %d, stdout %q (%v); want %d and a JSON answer\n%s", r.code, r.stdout, err, c.code, r.stderr)
			}
			line := strings.TrimSuffix(strings.TrimPrefix(r.stderr, "backup adopt: "), "\n")
			if out.Error != line || !strings.Contains(out.Error, c.error) || out.From != c.archive || out.Activated {
				t.Errorf("answer %+v; want error %q (stderr's line, naming %q), from %q, not activated", out, line, c.error, c.archive)
			}
		})
	}
	// A usage error is refused before adopt runs: one line, no answer.
	r := backup(t, runOpts{dir: dir}, "adopt", "--json", "--allow-incomplete", set, "whole.zip")
	if r.code != exitUsage || r.stdout != "" {
		t.Errorf("usage error: exit %d, stdout %q; want 2 and nothing", r.code, r.stdout)
	}
}
