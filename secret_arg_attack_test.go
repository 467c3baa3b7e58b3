package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackSecretKeyAsArgument: a secret key pasted where a path goes (backup verify "$KEY",
// restore "$KEY" dest, create -o x.zip "$KEY") came back whole in the error that no such
// file exists ("backup verify: AGE-SECRET-KEY-1…: no such file or directory"), to a
// terminal, a cron job's mail or a CI log (left by the encryption pass of 2026-12-06). It is
// refused unrepeated now, exit 2, nothing made, in lower case too; a folder named so is
// backed up as any other.
func TestAttackSecretKeyAsArgument(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	secret := strings.TrimSpace(strings.Split(string(must(os.ReadFile(key.identity))), "\n")[1])
	body := secret[len("AGE-SECRET-KEY-"):]
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "x"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "app.zip", "app"), exitComplete)
	before := listTree(t, dir)
	for _, args := range [][]string{
		{"create", "-o", "out.zip", secret},
		{"create", "--output-dir", "set", strings.ToLower(secret)},
		{"verify", secret},
		{"list", secret},
		{"restore", secret, "dest"},
		{"restore", "app.zip", secret},
		{"status", secret},
		{"sets", secret},
		{"prune", "--keep-last", "1", secret},
		{"activate", secret, "app.zip"},
		{"adopt", "app.zip", secret},
		{secret},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || strings.Contains(strings.ToUpper(r.stdout+r.stderr), body) || !strings.Contains(r.stderr, "is a secret key, not a path") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and the key not repeated", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if after := listTree(t, dir); !slices.Equal(after, before) {
		t.Errorf("the folder holds %q, want %q as before", after, before)
	}
	if err := os.Rename(filepath.Join(dir, "app"), filepath.Join(dir, secret)); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "named.zip", secret), exitComplete)
}
