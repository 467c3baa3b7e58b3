package seal

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"
	"golang.org/x/crypto/ssh"
)

// testKeys are one key pair of each kind the package takes.
type testKeys struct {
	x25519     *age.X25519Identity
	hybrid     *age.HybridIdentity
	sshPub     string // an authorized_keys line
	sshPrivate []byte // PEM, unencrypted
	sshLocked  []byte // PEM, protected by a passphrase
}

// newTestKeys returns the package's test keys, made once: post-quantum key generation takes
// seconds under the race detector.
func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	k, err := sharedKeys()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var sharedKeys = sync.OnceValues(makeTestKeys)

func makeTestKeys() (testKeys, error) {
	x, err := age.GenerateX25519Identity()
	if err != nil {
		return testKeys{}, err
	}
	h, err := age.GenerateHybridIdentity()
	if err != nil {
		return testKeys{}, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return testKeys{}, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return testKeys{}, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "test@host")
	if err != nil {
		return testKeys{}, err
	}
	locked, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "test@host", []byte("secret"))
	if err != nil {
		return testKeys{}, err
	}
	return testKeys{x25519: x, hybrid: h, sshPub: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " test@host",
		sshPrivate: pem.EncodeToMemory(block), sshLocked: pem.EncodeToMemory(locked)}, nil
}

// writeFile writes data to a file of mode perm in a temp folder and returns its path.
func writeFile(t *testing.T, name string, data []byte, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// TestIsSecretKey: what a key file's flag refuses unechoed is a pasted key's text, never a
// file's name that only looks like one.
func TestIsSecretKey(t *testing.T) {
	for s, want := range map[string]bool{
		"AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS3290GG":          true,
		"age-secret-key-1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gg":          true,
		" AGE-SECRET-KEY-PQ-1QYQSZQGPQYQSZQGP\n":                                              true,
		"AGE-PLUGIN-YUBIKEY-1QYQSZQGP":                                                        true,
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA":                       true,
		"# created: 2026-12-06T13:11:24Z\n# public key: age1ql3z\nAGE-SECRET-KEY-1QYQSZQGP\n": true,
		"my key: age-secret-key-1qyqszqgp":                                                    true,
		"key.txt":                                                                             false,
		"/home/u/keys dir/AGE-SECRET-KEY-1.txt":                                               false,
		"/etc/backup/age-secret-key-1.txt":                                                    false,
		"AGE-SECRET-KEY-backup.txt":                                                           false,
		"/home/u/.ssh/my private key":                                                         false,
	} {
		if got := IsSecretKey(s); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", s, got, want)
		}
	}
}
