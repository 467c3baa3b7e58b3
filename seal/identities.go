package seal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"golang.org/x/crypto/ssh"
)

// Identities are the secret keys that may decrypt an archive. A nil *Identities holds none.
type Identities struct {
	list []age.Identity
}

// ReadFile adds the identities in the file at path: an age identity file (AGE-SECRET-KEY-1…
// and AGE-SECRET-KEY-PQ-1… lines, # comments, blank lines), or an unencrypted SSH private
// key (ed25519 or RSA). warning is not empty when group or others may read the file (as ssh
// warns of such a key): it is used all the same. Errors never repeat the file's text.
func (ids *Identities) ReadFile(path string) (warning string, err error) {
	data, perm, owner, err := readKeyFileOwned(path)
	if err != nil {
		return "", err
	}
	if owner >= 0 {
		warning = fmt.Sprintf("identity file %s belongs to another user (uid %d), who can read it: keep it your own, mode 0600", path, owner)
	}
	if perm&0o044 != 0 {
		warning = fmt.Sprintf("identity file %s can be read by group or others (mode %04o): keep it 0600", path, perm)
	}
	found, err := parseIdentities(data)
	if err != nil {
		return warning, err
	}
	ids.list = append(ids.list, found...)
	return warning, nil
}

// IsSecretKey reports whether s, given where a key file's name goes, holds a secret key's
// text instead (pasted, as keys are): an error that repeated the name would put the key in
// a log. The key may come after other words: a whole identity file pasted ("-i
// "$(cat key.txt)"") begins with age-keygen's comments. Bech32 lets age's keys be written
// in lower case, and holds no / or . that a file's name might; a pasted PEM key begins with
// its armor.
func IsSecretKey(s string) bool {
	for _, word := range strings.Fields(strings.ToUpper(s)) {
		ageKey := strings.HasPrefix(word, "AGE-SECRET-KEY-") || strings.HasPrefix(word, "AGE-PLUGIN-")
		if ageKey && !strings.ContainsAny(word, "/.") || strings.HasPrefix(word, "-----BEGIN") {
			return true
		}
	}
	return false
}

// Len is how many identities there are.
func (ids *Identities) Len() int {
	if ids == nil {
		return 0
	}
	return len(ids.list)
}

// parseIdentities parses an identity file's bytes.
func parseIdentities(data []byte) ([]age.Identity, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(trimmed, []byte(magic)) || bytes.HasPrefix(trimmed, []byte("-----BEGIN AGE ENCRYPTED FILE-----")):
		return nil, errors.New("is an encrypted (passphrase-protected) identity file, whose passphrase backup cannot ask for: decrypt it to a file of mode 0600 (age -d)")
	case bytes.HasPrefix(trimmed, []byte("-----BEGIN")):
		return parseSSHIdentity(data)
	}
	var found []age.Identity
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1) // a line may be as long as the file, bounded by maxKeyFile
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		id, err := parseIdentity(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		found = append(found, id)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, errors.New("holds no identity")
	}
	return found, nil
}

// parseIdentity parses one line of an age identity file.
func parseIdentity(s string) (age.Identity, error) {
	var id age.Identity
	var err error
	switch {
	case strings.HasPrefix(s, "AGE-SECRET-KEY-PQ-1"):
		id, err = age.ParseHybridIdentity(s)
	case strings.HasPrefix(s, "AGE-SECRET-KEY-1"):
		id, err = age.ParseX25519Identity(s)
	case strings.HasPrefix(s, "AGE-PLUGIN-"):
		return nil, errors.New("plugin identities are not supported")
	case strings.HasPrefix(s, "age1") || strings.HasPrefix(s, "ssh-"):
		return nil, errors.New("this is a public key (a recipient), not an identity")
	default:
		return nil, errors.New("not an age identity (want AGE-SECRET-KEY-1… or an SSH private key)")
	}
	if err != nil {
		return nil, errors.New("not a valid age identity")
	}
	return id, nil
}

// parseSSHIdentity parses an unencrypted SSH private key.
func parseSSHIdentity(data []byte) ([]age.Identity, error) {
	id, err := agessh.ParseIdentity(data)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, errors.New("is an SSH key protected by a passphrase, which backup cannot ask for: give an unencrypted key or an age identity file")
	case err != nil:
		return nil, errors.New("is not an SSH private key backup can use (want an unencrypted ed25519 or RSA key)")
	}
	return []age.Identity{id}, nil
}

// readKeyFileOwned reads a recipients or identity file: opened without blocking (a FIFO must not
// hang the command), following a symlink (the user named the path), and refused unless it
// is a regular file of at most maxKeyFile bytes. It returns the file's permission bits.
// It also returns the uid of another user who owns the file (one neither the running user
// nor root), or -1: that user may write it, and read it, whatever its mode says of group
// and others.
func readKeyFileOwned(path string) ([]byte, fs.FileMode, int, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, -1, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, -1, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, -1, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, 0, -1, err
	}
	if len(data) > maxKeyFile {
		return nil, 0, -1, fmt.Errorf("larger than %d bytes", maxKeyFile)
	}
	other := -1
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		other = int(st.Uid)
	}
	return data, info.Mode().Perm(), other, nil
}
