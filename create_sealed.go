package main

// What a run into a backup set checks of the set (its LATEST, else its newest run) before it
// writes anything: one set, one source; and one kind, encrypted or plain.

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"slices"
	"strings"
	"syscall"

	"backup/backupset"
	"backup/format"
	"backup/seal"
)

// checkLatest refuses a run into a set whose witness w (LATEST's target, or its newest run
// when LATEST is lost or damaged: see backupset.Lock.Witness) is another source's archive
// (exit 1: one set, one source, so that restore DIR and pruning never mix two), or an
// archive of the other kind, encrypted where the run is plain or the reverse (exit 2,
// unless --allow-plaintext: a set that is encrypted must not quietly gain a plain copy of
// everything). An encrypted witness names no source: it is checked only when the run's
// identities decrypt it (a write-only host holds none). A change of recipients is allowed
// (key rotation), and said in one line.
func (cfg *createConfig) checkLatest(ctx context.Context, w backupset.Witness, stderr io.Writer) (int, error) {
	set, source, latest := cfg.set, cfg.sources[0].Name, w.Name
	sealedSet, sealedRun := backupset.IsSealedName(latest), cfg.recipients != nil
	switch {
	case sealedSet != sealedRun && !cfg.allowPlaintext:
		return exitUsage, kindError(set.dir, w, sealedSet)
	case sealedSet != sealedRun:
		sayf(stderr, "backup: %s now holds encrypted and plain backups (--allow-plaintext); %s\n", format.QuoteName(set.dir), witnessSays(w))
	case sealedSet:
		cfg.sayRotation(ctx, latest, stderr)
	}
	other := backupset.SourceOf(latest)
	if sealedSet {
		var ok bool
		var err error
		if other, ok, err = sealedSource(ctx, set.store, latest, cfg.identities); err != nil {
			return exitFailed, err
		} else if !ok {
			return 0, nil
		}
	}
	if other != source {
		return exitFailed, fmt.Errorf("%s is the backup set of %q (%s); back up %q into a folder of its own",
			format.QuoteName(set.dir), other, witnessSays(w), source)
	}
	return 0, nil
}

// checkFailedKind refuses a run of the other kind than the runs of a set that all failed
// (exit 2, unless --allow-plaintext), as checkLatest refuses one into a set with an archive:
// a host whose encrypted runs failed, and which then lost its --recipient, must not write a
// plain copy of everything into the set. w.Failed says the kind alone, not the source.
func (cfg *createConfig) checkFailedKind(w backupset.Witness) (int, error) {
	sealedSet := backupset.IsSealedName(w.Failed)
	if sealedSet == (cfg.recipients != nil) || cfg.allowPlaintext {
		return 0, nil
	}
	return exitUsage, kindError(cfg.set.dir, w, sealedSet)
}

// witnessSays names the archive that says what the set is, and why that one.
func witnessSays(w backupset.Witness) string {
	if w.Name == "" {
		return "no run of it left an archive, and its newest, " + format.QuoteName(w.Failed) + ", failed"
	}
	if w.ByLatest {
		return "LATEST names " + format.QuoteName(w.Name)
	}
	return "its newest run is " + format.QuoteName(w.Name) + ", and LATEST is missing or damaged"
}

// kindError is the refusal of a run of the other kind than the set's.
func kindError(dir string, w backupset.Witness, sealedSet bool) error {
	if sealedSet {
		return fmt.Errorf("%s is an encrypted backup set (%s): give --recipient or --recipients-file, or --allow-plaintext to write a plain backup into it", format.QuoteName(dir), witnessSays(w))
	}
	return fmt.Errorf("%s is a plain backup set (%s): back up encrypted into a set of its own, or give --allow-plaintext to mix them", format.QuoteName(dir), witnessSays(w))
}

// sayRotation says, in one line, that the run encrypts to other recipients than LATEST's
// receipt records: a key rotation, or a mistake worth seeing. The receipt is only compared
// with, never a source of keys: whoever can write the set could put any key in it.
func (cfg *createConfig) sayRotation(ctx context.Context, latest string, stderr io.Writer) {
	data, _, err := cfg.set.store.ReadFile(ctx, latest+format.ReceiptSuffix, format.MaxReceiptSize)
	if err != nil {
		return
	}
	rc, err := format.ParseReceipt(latest+format.ReceiptSuffix, data)
	if err != nil || rc.Encryption == nil {
		return
	}
	was, now := rc.Encryption.Recipients, cfg.recipients.Names()
	added, removed := missingFrom(now, was), missingFrom(was, now)
	if added+removed > 0 {
		sayf(stderr, "backup: the recipients changed since LATEST %s: %d added, %d removed (each backup opens only with the keys it was made for)\n",
			latest, added, removed)
	}
}

// missingFrom counts the names in a that b lacks.
func missingFrom(a, b []string) int {
	n := 0
	for _, s := range a {
		if !slices.Contains(b, s) {
			n++
		}
	}
	return n
}

// sealedSource returns the name every entry of the encrypted archive called name in st is
// stored under, read from its central directory through ids; ok is false when ids cannot
// decrypt it (no key, or none of its recipients') or its entries are not under one name.
// A read that failed (an I/O error, a server's error or stall) is err: the source cannot be
// told now, and a check that needs it must not pass for that. A damaged archive, which no
// later read will make whole, is "cannot tell", as before: a damaged LATEST does not stop a
// run.
func sealedSource(ctx context.Context, st backupset.Store, name string, ids *seal.Identities) (source string, ok bool, err error) {
	if ids.Len() == 0 {
		return "", false, nil
	}
	f, err := st.Open(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil // nothing there to tell it by (a LATEST whose target is gone)
	}
	if err != nil {
		return "", false, sourceUnknown(name, err)
	}
	defer f.Close()
	ra, size, err := ids.Unseal(f, f.Size())
	var nomatch *seal.NoMatchError
	switch {
	case errors.As(err, &nomatch) || errors.Is(err, seal.ErrNoIdentity):
		return "", false, nil
	case err != nil:
		return "", false, sourceUnknown(name, err)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return "", false, sourceUnknown(name, err)
	}
	top := ""
	for _, zf := range zr.File {
		t, _, _ := strings.Cut(zf.Name, "/")
		switch {
		case zf.Name == format.ManifestName:
		case top == "":
			top = t
		case t != top:
			return "", false, nil
		}
	}
	return top, top != "", nil
}

// sourceUnknown is sealedSource's answer when the archive could not be read: err when a
// read failed, nothing (cannot tell) when the archive is damaged.
func sourceUnknown(name string, err error) error {
	var pe *fs.PathError
	var errno syscall.Errno
	var ne net.Error
	if !errors.As(err, &pe) && !errors.As(err, &errno) && !errors.As(err, &ne) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("cannot tell which source %s holds: %w", format.QuoteName(name), cause(err))
}
