package seal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"golang.org/x/crypto/ssh"
)

// maxKeyFile bounds what is read of a recipients or identity file, as age bounds them.
const maxKeyFile = 16 << 20

// Recipients are the public keys an archive is encrypted to; any one of their identities
// decrypts it. The zero value holds none.
type Recipients struct {
	list  []age.Recipient
	names []string
}

// Add parses one recipient as a command line gives it. The error never repeats s.
func (r *Recipients) Add(s string) error {
	rcpt, name, err := parseRecipient(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	r.list = append(r.list, rcpt)
	r.names = append(r.names, name)
	return nil
}

// ReadFile adds the recipients of the file at path, in age's recipients-file format: one
// a line, lines starting with # and blank lines ignored. The file is opened without
// blocking and must be a regular file (a symlink to one is followed). An error names the
// line, never its text. warning is not empty when group or others may write the file: who
// can write it can add a recipient of their own, who then reads every archive made with it.
// It is used all the same, as ReadFile of identities uses a key others may read.
func (r *Recipients) ReadFile(path string) (warning string, err error) {
	data, perm, owner, err := readKeyFileOwned(path)
	if err != nil {
		return "", err
	}
	if owner >= 0 {
		warning = fmt.Sprintf("recipients file %s belongs to another user (uid %d), who can add a recipient of their own; keep it your own, mode 0644", path, owner)
	}
	if perm&0o022 != 0 {
		warning = fmt.Sprintf("recipients file %s can be written by group or others (mode %04o): who can write it can add a recipient of their own; keep it 0644", path, perm)
	}
	return warning, r.readRecipients(data)
}

// readRecipients adds the recipients in a recipients file's bytes.
func (r *Recipients) readRecipients(data []byte) error {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1) // a line may be as long as the file, bounded by maxKeyFile
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := r.Add(text); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("holds no recipient")
	}
	return nil
}

// Len is how many recipients there are.
func (r *Recipients) Len() int { return len(r.list) }

// Names are the recipients as a receipt records them, in the order given: an age X25519 key
// as it is (age1…); a post-quantum key, 2,000 characters long, as "age1pq1 sha256:HEX" of
// its text (printf %s KEY | sha256sum); an SSH key as its type and the fingerprint
// ssh-keygen -l prints ("ssh-ed25519 SHA256:…"), without its comment.
func (r *Recipients) Names() []string { return append([]string(nil), r.names...) }

// maxRecipients is the most recipients an archive may be encrypted to: age writes a file to
// any number, one stanza each, but its parser refuses a header of more than 1024 stanzas,
// so that no key (backup's or age -d's) would open one encrypted to more.
const maxRecipients = 1024

// Check says why the recipients cannot encrypt an archive together, or nil: age refuses to
// mix post-quantum and classic recipients (the file would be as weak as the classic ones),
// and reads no file to more than maxRecipients; a run must find that out before it writes
// anything.
func (r *Recipients) Check() error {
	switch {
	case len(r.list) == 0:
		return errors.New("no recipients")
	case len(r.list) > maxRecipients:
		return fmt.Errorf("%d recipients: age reads no file encrypted to more than %d, so no key would open the archive", len(r.list), maxRecipients)
	}
	w, err := age.Encrypt(io.Discard, r.list...)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "incompatible recipients: "))
	}
	return w.Close()
}

// Encrypt returns the writer an archive's bytes go through: an age file to every
// recipient, written to dst. Close writes its last chunk; it does not close dst.
func (r *Recipients) Encrypt(dst io.Writer) (io.WriteCloser, error) {
	return age.Encrypt(dst, r.list...)
}

// parseRecipient parses one recipient and names it as Names does.
func parseRecipient(s string) (age.Recipient, string, error) {
	switch {
	case strings.HasPrefix(s, "AGE-SECRET-KEY-"):
		return nil, "", errors.New("this is a secret key (an identity), not a recipient: give its public key (age-keygen -y)")
	case strings.HasPrefix(s, "age1pq1"):
		h, err := age.ParseHybridRecipient(s)
		if err != nil {
			return nil, "", errors.New("not a valid age1pq1… recipient")
		}
		sum := sha256.Sum256([]byte(h.String()))
		return h, "age1pq1 sha256:" + hex.EncodeToString(sum[:]), nil
	case strings.HasPrefix(s, "age1"):
		x, err := age.ParseX25519Recipient(s)
		if err != nil {
			return nil, "", errors.New("not a valid age1… recipient (plugin recipients are not supported)")
		}
		return x, x.String(), nil
	case strings.HasPrefix(s, "ssh-"):
		return parseSSHRecipient(s)
	case strings.Contains(s, "PRIVATE KEY"):
		return nil, "", errors.New("this is a private key, not a recipient: give its public key (the .pub file)")
	}
	return nil, "", errors.New("unknown recipient type (want age1…, age1pq1…, ssh-ed25519 … or ssh-rsa …)")
}

// parseSSHRecipient parses an SSH public key line (as in a .pub or authorized_keys file).
func parseSSHRecipient(s string) (age.Recipient, string, error) {
	pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil {
		return nil, "", errors.New("not a valid SSH public key")
	}
	var rcpt age.Recipient
	switch pk.Type() {
	case ssh.KeyAlgoED25519:
		rcpt, err = agessh.NewEd25519Recipient(pk)
	case ssh.KeyAlgoRSA:
		rcpt, err = agessh.NewRSARecipient(pk)
	default:
		return nil, "", fmt.Errorf("SSH key type %s is not supported (want ssh-ed25519 or ssh-rsa)", pk.Type())
	}
	if err != nil {
		return nil, "", fmt.Errorf("SSH key: %w", err)
	}
	return rcpt, pk.Type() + " " + ssh.FingerprintSHA256(pk), nil
}

// OpenableBy reports whether one of ids decrypts what is encrypted to these recipients: a
// run's read-back can then check the archive's contents, and otherwise only its ciphertext
// (a host that holds no key of its own backups). It finds out by decrypting a probe.
func (r *Recipients) OpenableBy(ids *Identities) bool {
	if ids.Len() == 0 || len(r.list) == 0 {
		return false
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, r.list...)
	if err != nil || w.Close() != nil {
		return false
	}
	_, err = age.Decrypt(&buf, ids.list...)
	return err == nil
}
