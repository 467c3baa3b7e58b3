package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// cliKey is a key pair of one kind, as the age tools and backup take it: the identity file
// and the recipient's text, and a recipients file holding it.
type cliKey struct {
	kind, identity, recipient, recipientsFile string
}

// cliKeys makes a key of each kind backup takes: X25519 and post-quantum by age-keygen, and
// an SSH ed25519 key.
func cliKeys(t *testing.T) []cliKey {
	t.Helper()
	keygen := ageTool(t, "age-keygen")
	dir := t.TempDir()
	var keys []cliKey
	for _, kind := range []string{"x25519", "pq"} {
		id := filepath.Join(dir, kind+".key")
		args := []string{"-o", id}
		if kind == "pq" {
			args = append([]string{"-pq"}, args...)
		}
		if out, err := exec.Command(keygen, args...).CombinedOutput(); err != nil {
			t.Fatalf("age-keygen %v: %v\n%s", args, err, out)
		}
		pub, err := exec.Command(keygen, "-y", id).Output()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, cliKey{kind: kind, identity: id, recipient: strings.TrimSpace(string(pub))})
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	block, err := ssh.MarshalPrivateKey(priv, "backup@test")
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(id, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	keys = append(keys, cliKey{kind: "ssh-ed25519", identity: id, recipient: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " backup@test"})
	for i := range keys {
		keys[i].recipientsFile = filepath.Join(dir, keys[i].kind+".recipients")
		if err := os.WriteFile(keys[i].recipientsFile, []byte(keys[i].recipient+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// onlyFile returns the one file in dir whose name ends in suffix.
func onlyFile(t *testing.T, dir, suffix string) string {
	t.Helper()
	var found []string
	for _, name := range listDir(t, dir) {
		if strings.HasSuffix(name, suffix) {
			found = append(found, filepath.Join(dir, name))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s holds %q; want one *%s", dir, found, suffix)
	}
	return found[0]
}

// TestSealedAgeRoundTrip: an archive backup encrypts opens with age -d alone and passes
// unzip -t; a zip backup wrote, encrypted by age -r (-R), verifies and restores with
// --identity. For each kind of key.
func TestSealedAgeRoundTrip(t *testing.T) {
	t.Parallel()
	ageCmd := ageTool(t, "age")
	for _, k := range cliKeys(t) {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tree := map[string]node{"a.txt": {content: "alpha\n"}, "sub/b.bin": {content: strings.Repeat("\x00\x01binary", 20000)}, "empty": {kind: "dir"}}
			makeTree(t, filepath.Join(dir, "app"), tree)
			out := filepath.Join(dir, "out")
			os.Mkdir(out, 0o755)
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "--recipients-file", k.recipientsFile, "-o", out+"/", "app"), exitComplete)
			sealed := onlyFile(t, out, ".zip.age")
			plain := filepath.Join(dir, "decrypted.zip")
			if b, err := exec.Command(ageCmd, "-d", "-i", k.identity, "-o", plain, sealed).CombinedOutput(); err != nil {
				t.Fatalf("age -d: %v\n%s", err, b)
			}
			entries := readZip(t, plain)
			if entries["app/a.txt"] != "alpha\n" || entries["app/sub/b.bin"] != tree["sub/b.bin"].content {
				t.Errorf("age -d gave a zip of %q", keys(entries))
			}
			mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-i", k.identity, sealed), exitComplete)

			// The other way: age encrypts a zip backup wrote.
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "plain.zip", "app"), exitComplete)
			byAge := filepath.Join(dir, "by-age.zip.age")
			if b, err := exec.Command(ageCmd, "-R", k.recipientsFile, "-o", byAge, filepath.Join(dir, "plain.zip")).CombinedOutput(); err != nil {
				t.Fatalf("age -R: %v\n%s", err, b)
			}
			mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-i", k.identity, byAge), exitComplete)
			dest := filepath.Join(dir, "restored")
			mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-i", k.identity, byAge, dest), exitComplete)
			if got, _ := os.ReadFile(filepath.Join(dest, "app", "sub", "b.bin")); string(got) != tree["sub/b.bin"].content {
				t.Errorf("restored b.bin: %d bytes", len(got))
			}
		})
	}
}
