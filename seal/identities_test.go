package seal

import (
	"os"
	"strings"
	"testing"
)

func TestIdentitiesReadFile(t *testing.T) {
	k := newTestKeys(t)
	ageFile := "# created: today\n# public key: " + k.x25519.Recipient().String() + "\n" + k.x25519.String() + "\n" + k.hybrid.String() + "\n"
	cases := []struct {
		name    string
		data    string
		perm    uint32
		n       int
		warn    bool
		errWith string
	}{
		{"age identity file", ageFile, 0o600, 2, false, ""},
		{"readable by others", ageFile, 0o644, 2, true, ""},
		{"readable by group", ageFile, 0o640, 2, true, ""},
		{"ssh key", string(k.sshPrivate), 0o600, 1, false, ""},
		{"ssh key with passphrase", string(k.sshLocked), 0o600, 0, false, "passphrase"},
		{"a recipient", k.x25519.Recipient().String() + "\n", 0o600, 0, false, "line 1: this is a public key"},
		{"comments only", "# nothing\n", 0o600, 0, false, "holds no identity"},
		{"garbage on line 2", "# x\nnot-a-key\n", 0o600, 0, false, "line 2: "},
		{"age-encrypted identity file", magic + "-> X25519 abc\n", 0o600, 0, false, "passphrase"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ids Identities
			warning, err := ids.ReadFile(writeFile(t, "key", []byte(c.data), os.FileMode(c.perm)))
			if c.errWith != "" {
				if err == nil || !strings.Contains(err.Error(), c.errWith) {
					t.Fatalf("error %v, want one with %q", err, c.errWith)
				}
				if strings.Contains(err.Error(), k.x25519.String()) || strings.Contains(err.Error(), "not-a-key") {
					t.Errorf("error %q repeats the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ids.Len() != c.n || (warning != "") != c.warn {
				t.Errorf("%d identities, warning %q; want %d, warning %v", ids.Len(), warning, c.n, c.warn)
			}
			if c.warn && !strings.Contains(warning, "0600") {
				t.Errorf("warning %q does not say what to do", warning)
			}
		})
	}
}
