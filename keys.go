package main

// The flags of encryption: the recipients create encrypts an archive to, and the identities
// that the commands reading an archive decrypt it with (see docs/encryption.md).

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"backup/atomicfile"
	"backup/format"
	"backup/seal"
)

// recipientFlags are create's flags that encrypt the archive.
type recipientFlags struct {
	recipients, files []string
	allowPlaintext    bool
}

// load parses the recipients given; nil when there are none (the archive is not encrypted).
// An error never repeats a recipient: a secret key pasted there must not reach a log. A
// recipients file that group or others may write gets a warning line on stderr.
func (f *recipientFlags) load(stderr io.Writer) (*seal.Recipients, error) {
	if len(f.recipients) == 0 && len(f.files) == 0 {
		return nil, nil
	}
	var r seal.Recipients
	for i, s := range f.recipients {
		if err := r.Add(s); err != nil {
			return nil, fmt.Errorf("--recipient (#%d): %w", i+1, err)
		}
	}
	for i, name := range f.files {
		if seal.IsSecretKey(name) {
			return nil, errSecretAsFile("--recipients-file", i, "give a file of public keys (age-keygen -y prints the one of a secret key)")
		}
		warning, err := r.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("--recipients-file %s: %w", name, cause(err))
		}
		if warning == "" {
			warning = replaceableRecipients(name)
		}
		if warning != "" {
			sayf(stderr, "backup create: warning: %s\n", warning)
		}
	}
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.given(), err)
	}
	return &r, nil
}

// replaceableRecipients says, for a warning line, why another user could put a recipients
// file of theirs at path, adding their key, though the file is not theirs to write: a folder
// on the way to it (as given and as its symlinks resolve) is theirs, or open to them without
// the sticky bit (atomicfile.FixedPath, the rule of the local copies of a bucket's sets).
// "" when none is.
func replaceableRecipients(path string) string {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	for _, d := range []string{filepath.Dir(path), filepath.Dir(resolved)} {
		if err := atomicfile.FixedPath(d); err != nil {
			return fmt.Sprintf("recipients file %s can be replaced by others: %v; keep it in a folder of your own", path, err)
		}
	}
	return ""
}

// given names the flags (and files) the recipients came from, for an error about all of
// them together.
func (f *recipientFlags) given() string {
	var what []string
	if len(f.recipients) > 0 {
		what = append(what, "--recipient")
	}
	for _, name := range f.files {
		what = append(what, "--recipients-file "+name)
	}
	return strings.Join(what, ", ")
}

// identityFlag is -i/--identity, of every command that reads an archive.
type identityFlag struct{ paths []string }

const identityUsage = "decrypt an encrypted archive with the identity in `FILE` (an age identity file or an unencrypted SSH private key); repeatable"

func addIdentityFlag(flags *pflag.FlagSet, usage string) *identityFlag {
	f := &identityFlag{}
	flags.StringArrayVarP(&f.paths, "identity", "i", nil, usage)
	return f
}

// load reads the identity files given (nil when none), printing a warning line for a file
// that group or others can read (it is used all the same, as ssh uses such a key after its
// warning). prefix begins the line ("backup verify").
func (f *identityFlag) load(stderr io.Writer, prefix string) (*seal.Identities, error) {
	if len(f.paths) == 0 {
		return nil, nil
	}
	ids := &seal.Identities{}
	for i, p := range f.paths {
		if seal.IsSecretKey(p) {
			return nil, errSecretAsFile("--identity", i, "write it to a file of mode 0600 and give that")
		}
		warning, err := ids.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--identity %s: %w", p, cause(err))
		}
		if warning != "" {
			sayf(stderr, "%s: warning: %s\n", prefix, warning)
		}
	}
	return ids, nil
}

// errSecretAsFile refuses the i-th value of flag, a secret key given where the name of a file
// goes, naming the flag and not the value, which would put the key in a log.
func errSecretAsFile(flag string, i int, hint string) error {
	return fmt.Errorf("%s (#%d) is a secret key, not the name of a file: %s", flag, i+1, hint)
}

// needIdentity is the usage error of a command given an encrypted archive and no
// --identity.
func needIdentity(path string) error {
	return fmt.Errorf("%s is encrypted: give --identity FILE (the key of one of its recipients) to read it", path)
}

// isNoIdentity reports whether err is an encrypted archive opened without an identity.
func isNoIdentity(err error) bool { return errors.Is(err, seal.ErrNoIdentity) }

// refusePlainAsSealed refuses a run without recipients whose -o names an encrypted archive
// (NAME.zip.age), or an encrypted archive already there under any name (-o NAME names it as
// the user says): the name or the file says ciphertext, and a script whose recipients went
// missing (an empty variable) would put a plain copy of everything where only ciphertext
// should go, or replace an encrypted archive by one (--force), and say complete. A set
// refuses such a run by its LATEST (checkLatest); this is -o's counterpart.
func (cfg *createConfig) refusePlainAsSealed() error {
	path, ok := cfg.explicitArchive()
	switch {
	case cfg.recipients != nil || !ok:
		return nil
	case strings.HasSuffix(strings.ToLower(path), seal.Ext):
		return fmt.Errorf("-o %s names an encrypted archive (%s), and no recipient was given: give --recipient or --recipients-file, or a name without %s for a plain zip",
			format.QuoteName(path), seal.Ext, seal.Ext)
	case isSealedFile(path):
		return fmt.Errorf("-o %s is an encrypted archive, and no recipient was given: give --recipient or --recipients-file, or remove it first to write a plain zip there",
			format.QuoteName(path))
	}
	return nil
}
