package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestAttackKeyFileTextGivenAsKeyFile: the whole text of an identity file, as age-keygen
// writes it ("# created: …", "# public key: …", then the key), given where the name of the
// file goes (-i "$(cat key.txt)", -i "$(age-keygen)", --recipients-file "$KEY" in a script)
// is refused (exit 2, nothing written) by a line that names the flag, never the key. Before,
// only a value that began with the key was known for one, and this one was echoed whole:
// "--identity # created: …\n# public key: age1…\nAGE-SECRET-KEY-1…: no such file or
// directory", the secret in a cron job's mail.
func TestAttackKeyFileTextGivenAsKeyFile(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	hybrid, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	dir, archive := sealedArchive(t, key)
	file := string(must(os.ReadFile(key.identity)))
	secret := strings.TrimSpace(strings.Split(file, "\n")[1])
	keygen := "# created: 2026-12-06T13:11:24Z\n# public key: " + hybrid.Recipient().String()[:60] + "\n" + hybrid.String()
	for _, text := range []string{file, strings.TrimSpace(file), keygen, "my key: " + secret} {
		for _, args := range [][]string{
			{"create", "--output-dir", "set", "--recipient", key.recipient, "-i", text, "app"},
			{"create", "--output-dir", "set", "--recipients-file", text, "app"},
			{"verify", "-i", text, archive},
			{"restore", "-i", key.identity, "--identity", text, archive, "restored"},
		} {
			r := backup(t, runOpts{dir: dir}, args...)
			out := r.stdout + r.stderr
			if r.code != exitUsage || strings.Contains(out, secret[20:40]) || strings.Contains(out, hybrid.String()[20:40]) {
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
