package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// The secrets pass (docs/attacks.md, "Secrets"): credentials, keys and identities never
// appear in an error, a receipt, a metrics file or an event stream, and the files backup
// writes are never more readable than the docs say.

// TestAttackSecretKeyGivenAsKeyFile: a secret key pasted where the name of the file that
// holds it goes (-i KEY, --recipients-file KEY) is refused (exit 2, nothing written) by a
// line that names the flag, never the key: a cron job's mail or a CI log must not keep it.
// Before, the error was "--identity AGE-SECRET-KEY-1…: no such file or directory".
func TestAttackSecretKeyGivenAsKeyFile(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	hybrid, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	dir, archive := sealedArchive(t, key)
	classic := strings.TrimSpace(strings.Split(string(must(os.ReadFile(key.identity))), "\n")[1])
	for _, secret := range []string{classic, strings.ToLower(classic), hybrid.String()} {
		for _, args := range [][]string{
			{"create", "--output-dir", "set", "--recipient", key.recipient, "-i", secret, "app"},
			{"create", "--output-dir", "set", "--recipients-file", secret, "app"},
			{"list", "-i", key.identity, "-i", secret, archive},
			{"verify", "--json", "-i", secret, archive},
			{"restore", "-i", secret, archive, "restored"},
		} {
			r := backup(t, runOpts{dir: dir}, args...)
			if r.code != exitUsage || strings.Contains(r.stdout+r.stderr, secret[20:40]) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and no key", args[0], r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, " is a secret key, not the name of a file: ") {
				t.Errorf("%s: stderr %q; want the line to say what was given", args[0], r.stderr)
			}
		}
	}
	for _, name := range []string{"set", "restored"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused run made %s", name)
		}
	}
}
