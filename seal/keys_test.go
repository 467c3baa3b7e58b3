package seal

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
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

func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	x, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	h, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test@host")
	if err != nil {
		t.Fatal(err)
	}
	locked, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "test@host", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	return testKeys{x25519: x, hybrid: h, sshPub: string(ssh.MarshalAuthorizedKey(sp)[:len(ssh.MarshalAuthorizedKey(sp))-1]) + " test@host",
		sshPrivate: pem.EncodeToMemory(block), sshLocked: pem.EncodeToMemory(locked)}
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
