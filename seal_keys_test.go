package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// ageKey is an age X25519 key pair for a test: the identity in a file of mode 0600, and the
// recipient.
type ageKey struct {
	identity  string // the identity file's path
	recipient string // age1…
}

func newAgeKey(t *testing.T) ageKey {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(path, []byte("# a test key\n"+id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return ageKey{identity: path, recipient: id.Recipient().String()}
}

// ageTool returns the path of one of age's command-line tools (age, age-keygen) of version
// 1.3 or later, which knows post-quantum keys (Debian's age 1.1 does not): in
// $BACKUP_AGE_DIR (where .ci/run builds it), else on PATH. Without one the test skips,
// except under CI=true, where it fails.
func ageTool(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(os.Getenv("BACKUP_AGE_DIR"), name)
	if os.Getenv("BACKUP_AGE_DIR") == "" {
		path, _ = exec.LookPath(name)
	}
	if path != "" {
		out, err := exec.Command(path, "--version").CombinedOutput()
		v := strings.TrimSpace(string(out))
		if err == nil && !strings.HasPrefix(v, "v1.0") && !strings.HasPrefix(v, "v1.1") && !strings.HasPrefix(v, "v1.2") {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s 1.3 is missing: .ci/run builds it (or set BACKUP_AGE_DIR)", name)
	}
	t.Skipf("needs %s 1.3 or later (set BACKUP_AGE_DIR, or put it on PATH)", name)
	return ""
}
