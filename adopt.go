package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
	"backup/seal"
)

const adoptLong = `Brings ARCHIVE, made elsewhere (-o on another host, copied in by rsync), into the backup set
in DIR, so that status, prune and activate see it. ARCHIVE is checked against its receipt
(--receipt, else ARCHIVE.receipt.json) and read end to end, as verify does; it must be a
backup of the set's source.

Then, under the set's lock, the receipt and a copy of the archive are written into DIR under
the default name the receipt's start time gives (the receipt's archive path names the copy).
The copy goes through a temp file that is synced and whose SHA-256 must match the receipt
before it is renamed into place. ARCHIVE itself is never moved or changed. An archive whose
SHA-256 the set holds already is not copied again ("already in the set", exit 0), once
the set's copy is read and found to hash to it; a copy that does not is refused (exit 1).

ARCHIVE is opened once and copied from the descriptor that was checked. Its status and its
source are what its bytes prove: the manifest's status and the name its entries are stored
under, which the receipt must repeat.

LATEST is not moved unless --activate is given, which activates the copy as backup activate
does; an incomplete backup is then refused before anything is copied, unless
--allow-incomplete. A set in a bucket (s3://) cannot adopt yet.`

const adoptExitCodes = `0 adopted or already in the set, 1 refused (nothing written) or failed, 2 usage,
4 the set is locked by another run, 130 interrupted.`

// adoptJSON is what adopt --json prints.
type adoptJSON struct {
	Dir       string `json:"dir"`
	DirB64    string `json:"dir_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Archive   string `json:"archive"`           // the name in the set
	From      string `json:"from"`
	FromB64   string `json:"from_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Already   bool   `json:"already_in_set"`
	Activated bool   `json:"activated"`
	// Error says why adopt failed, was refused or did not run (exit 1, 4 or 130); archive
	// and already_in_set say whether the copy is in the set even so.
	Error string `json:"error,omitempty"`
}

type adoptConfig struct {
	dir, archive, receipt     string
	activate, allowIncomplete bool
	json                      bool
	wait                      time.Duration
	ids                       *seal.Identities // --identity: decrypt an encrypted ARCHIVE
}

func newAdoptCmd() *cobra.Command {
	cmd := newCommand("adopt [flags] DIR ARCHIVE", "copy an archive made elsewhere into a backup set", adoptLong, adoptExitCodes)
	var cfg adoptConfig
	flags := cmd.Flags()
	flags.StringVar(&cfg.receipt, "receipt", "", "the receipt (`PATH`) of ARCHIVE (default: ARCHIVE.receipt.json)")
	flags.BoolVar(&cfg.activate, "activate", false, "also make the adopted archive the set's LATEST")
	flags.BoolVar(&cfg.allowIncomplete, "allow-incomplete", false, "with --activate, also activate an incomplete backup")
	flags.BoolVar(&cfg.json, "json", false, "print the result as JSON")
	var wait durationFlag
	flags.Var(&wait, "wait", "wait up to `DURATION` for a running backup of the set instead of exiting 4")
	identity := addIdentityFlag(flags, "decrypt an encrypted ARCHIVE with the identity in `FILE` to check it (required for one); repeatable")
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stderr := cmd.ErrOrStderr()
		err := refuseEmpty(flags, []string{"receipt", "identity"}, args, "DIR", "ARCHIVE")
		if err == nil && len(args) > 0 {
			err = refuseDashArg("DIR", args[0])
		}
		if err == nil {
			cfg.ids, err = identity.load(stderr, "backup adopt")
		}
		switch {
		case len(args) != 2:
			err = argCount("DIR and ARCHIVE", len(args))
		case err != nil:
		case s3store.IsLocation(args[0]):
			err = fmt.Errorf("%s: %w", args[0], backupset.ErrAdoptUnsupported)
		case s3store.Mistyped(args[0]):
			err = checkMistyped(args[0])
		case cfg.allowIncomplete && !cfg.activate:
			err = errors.New("--allow-incomplete needs --activate")
		default:
			err = checkStatusOutputs(backupset.Folder{Dir: args[0]}, "", cmd.OutOrStdout())
			if err == nil {
				err = checkStdoutNotInput(cmd.OutOrStdout(), args[1], cfg.receipt, identity.paths)
			}
		}
		if err != nil {
			return usageError(stderr, "adopt", err)
		}
		cfg.dir = reachedOrAsGiven(args[0])
		cfg.archive, cfg.wait = args[1], time.Duration(wait)
		return adopt(cfg, cmd.OutOrStdout(), stderr)
	})
	return cmd
}

// adopt adopts and prints the outcome: --json whatever ended it but a usage error (the
// cause in "error"), else the lines of what it did.
func adopt(cfg adoptConfig, stdout, stderr io.Writer) int {
	out, code, err := runAdopt(cfg, stderr)
	switch {
	case cfg.json && code != exitUsage:
		out.Dir, out.DirB64 = format.JSONText(cfg.dir)
		out.From, out.FromB64 = format.JSONText(cfg.archive)
		if err != nil {
			out.Error = err.Error()
		}
		if werr := writeJSON(stdout, out); werr != nil {
			outputCut(stderr, "adopt", "--json", werr)
		}
	case err == nil:
		writeAdopted(stdout, out)
	}
	return code
}

// runAdopt checks ARCHIVE, takes the set's lock, copies it in and, with --activate,
// activates it. It returns what it did, the exit code, and what stopped it, which it has
// printed.
func runAdopt(cfg adoptConfig, stderr io.Writer) (adoptJSON, int, error) {
	out := adoptJSON{Dir: cfg.dir, From: cfg.archive}
	ctx, stop := interruptible()
	defer stop()
	a, err := checkAdoptee(ctx, cfg)
	switch {
	case isNoIdentity(err):
		return out, exitUsage, stopped(stderr, "adopt", needIdentity(format.QuoteName(cfg.archive)))
	case err != nil && ctx.Err() != nil:
		return out, exitInterrupted, stopped(stderr, "adopt", errInterrupted)
	case err != nil:
		return out, exitFailed, stopped(stderr, "adopt", fmt.Errorf("%s: %w", format.QuoteName(cfg.archive), cause(err)))
	}
	defer a.Close()
	if err := mkdirFolder(cfg.dir); err != nil {
		if !errors.As(err, new(*fs.PathError)) { // a dangling symlink, which the error does not name
			err = fmt.Errorf("DIR %s: %w", format.QuoteName(cfg.dir), err)
		}
		return out, exitFailed, stopped(stderr, "adopt", err)
	}
	st := backupset.Folder{Dir: cfg.dir}
	lock, code, err := takeLock(ctx, st, cfg.wait, "backup adopt", stderr, backupset.Acquire)
	if lock == nil {
		return out, code, err
	}
	defer releaseSet(lock, "backup adopt", stderr)
	if _, err := lock.RemoveStale(ctx); err != nil {
		sayf(stderr, "backup adopt: %s: could not remove what a killed run left: %v\n", cfg.dir, err)
	}
	latest, _ := lock.Pointer(ctx)
	name, already, err := adoptInto(ctx, lock, a, cfg.ids, latest)
	out.Archive, out.Already = name, already
	switch {
	case ctx.Err() != nil && err != nil:
		return out, exitInterrupted, stopped(stderr, "adopt", fmt.Errorf("interrupted; %s not adopted", format.QuoteName(cfg.archive)))
	case err != nil:
		return out, exitFailed, stopped(stderr, "adopt", fmt.Errorf("%s: %s", format.QuoteName(cfg.archive), setError(cfg.dir, err)))
	case ctx.Err() != nil && cfg.activate:
		return out, exitInterrupted, stopped(stderr, "adopt", interruptedInSet(cfg.archive, name))
	}
	if latest, _ := lock.Pointer(ctx); cfg.activate && latest != name {
		// A copy made now was read back against the receipt, whose archive was verified
		// above; a copy already in the set is read back as activate reads it.
		verify := func(string) error { return nil }
		if already {
			verify = storeVerifier(ctx, st, cfg.ids, latest)
		}
		act := backupset.Activation{Archive: name, At: time.Now().UTC().Truncate(time.Second), By: "adopt"}
		_, err = lock.ActivateByHand(ctx, act, cfg.allowIncomplete, verify)
		var unrecorded *backupset.RecordError
		switch {
		case errors.As(err, &unrecorded):
			// LATEST moved: the activation stands, only its record is missing.
			sayf(stderr, "backup adopt: %v\n", unrecorded)
		case err != nil && ctx.Err() != nil:
			return out, exitInterrupted, stopped(stderr, "adopt", interruptedInSet(cfg.archive, name))
		case err != nil:
			return out, exitFailed, stopped(stderr, "adopt", fmt.Errorf("%s is in the set as %s, but LATEST was not moved: %s", format.QuoteName(cfg.archive), format.QuoteName(name), setError(cfg.dir, err)))
		}
	}
	out.Activated = cfg.activate
	return out, exitComplete, nil
}

// interruptedInSet is why an adopt stopped when interrupted after its copy of archive was
// in the set as name: the copy stays there, and LATEST was not moved to it.
func interruptedInSet(archive, name string) error {
	return fmt.Errorf("interrupted; %s is in the set as %s, LATEST not moved", format.QuoteName(archive), format.QuoteName(name))
}

// adoptInto copies a into the set under lock (see backupset.Lock.Adopt), once an encrypted
// one is found to hold the source of the set's encrypted LATEST (latest), when ids tell.
func adoptInto(ctx context.Context, lock *backupset.Lock, a adoptee, ids *seal.Identities, latest string) (string, bool, error) {
	if a.Source == backupset.Sealed {
		if err := sealedOfSet(ctx, lock.Store(), ids, a.holds, latest); err != nil {
			return "", false, err
		}
	}
	return lock.Adopt(ctx, a.Adoption)
}

func writeAdopted(w io.Writer, out adoptJSON) {
	if out.Already {
		fmt.Fprintf(w, "%s is already in the set as %s; nothing copied\n", format.QuoteName(out.From), format.QuoteName(out.Archive))
	} else {
		fmt.Fprintf(w, "adopted %s as %s\n", format.QuoteName(out.From), format.QuoteName(filepath.Join(out.Dir, out.Archive)))
	}
	if out.Activated {
		fmt.Fprintf(w, "LATEST -> %s\n", format.QuoteName(out.Archive))
	}
}

// adoptee is ARCHIVE once checked: the adoption, reading from the descriptor that was
// checked.
type adoptee struct {
	backupset.Adoption
	file *os.File
	// holds is the source the archive's entries are stored under (for an encrypted one,
	// whose Source is backupset.Sealed, what only they say).
	holds string
}

func (a adoptee) Close() error { return a.file.Close() }

// checkAdoptee reads ARCHIVE's receipt and checks ARCHIVE against it, and returns what the
// set needs to copy it. ARCHIVE is opened once, without blocking, and must be a regular file;
// it is verified and later copied through that one descriptor, so that a FIFO or another
// file put at the path meanwhile is never read (the copy is checked against the receipt's
// SHA-256 again). Everything the set relies on is proven by the bytes: the status (the
// manifest's, which the receipt must repeat) and the source (the entries' top name, which
// the receipt must name). With --activate an incomplete backup is refused here, before
// anything is written, unless --allow-incomplete.
func checkAdoptee(ctx context.Context, cfg adoptConfig) (adoptee, error) {
	path := cfg.receipt
	if path == "" {
		path = format.ReceiptPath(cfg.archive)
	}
	// ARCHIVE is opened first, under a shared flock while its receipt is read: create
	// --force -o swaps in its archive, then its receipt, holding both locked, and the two
	// read must be of one run (atomicfile.ReadLocked). One that cannot be opened so (a
	// symlink the user named) is opened as it was, after the receipt.
	f, size, unlock, lerr := openReadLocked(cfg.archive)
	rc, source, err := readAdopteeReceipt(path)
	if lerr == nil {
		unlock()
	}
	if err != nil {
		if lerr == nil {
			f.Close()
		}
		if cfg.receipt == "" {
			// The receipt looked for beside ARCHIVE: one elsewhere is given with --receipt.
			err = fmt.Errorf("%w (give it with --receipt)", err)
		}
		return adoptee{}, err
	}
	if lerr != nil {
		if f, size, err = openRegular(cfg.archive); err != nil {
			return adoptee{}, err
		}
	}
	a := adoptee{Adoption: backupset.Adoption{Receipt: rc, Archive: f, Size: size, Source: source}, file: f}
	if seal.IsSealed(f) != (source == backupset.Sealed) {
		f.Close()
		return adoptee{}, fmt.Errorf("receipt %s does not describe the archive: one is of an encrypted archive, the other not", path)
	}
	if a.holds, err = verifyAdoptee(ctx, cfg, a.Adoption, path); err != nil {
		f.Close()
		return adoptee{}, err
	}
	return a, nil
}

// readAdopteeReceipt reads the receipt at path and returns it with the name of its one
// source, which must be able to name a set's archives.
func readAdopteeReceipt(path string) (*format.Receipt, string, error) {
	rc, err := format.ReadReceipt(path)
	if err != nil {
		return nil, "", fmt.Errorf("receipt %s: %w", path, cause(err))
	}
	if rc.Archive == nil || (rc.Status != format.Complete && rc.Status != format.Incomplete) {
		return nil, "", fmt.Errorf("receipt %s says %s and records no usable archive", path, rc.Status)
	}
	if rc.Schema == format.SealedReceiptSchema {
		return rc, backupset.Sealed, nil // an encrypted archive's receipt names no source: its entries say it
	}
	if len(rc.Sources) != 1 {
		return nil, "", fmt.Errorf("receipt %s: the archive holds %d sources; a set holds one", path, len(rc.Sources))
	}
	source := filepath.Base(rc.Sources[0])
	if source == string(filepath.Separator) {
		source = "root"
	}
	if err := backupset.CheckSourceName(source); err != nil {
		return nil, "", fmt.Errorf("receipt %s: its source %w", path, err)
	}
	return rc, source, nil
}

// verifyAdoptee reads the archive end to end against its receipt (at receiptPath), as
// verify does (an encrypted one decrypted with cfg.ids), checks what the receipt says against
// what the archive proves, and returns the source its entries are stored under.
func verifyAdoptee(ctx context.Context, cfg adoptConfig, a backupset.Adoption, receiptPath string) (string, error) {
	r, err := archive.NewCheckedReader(a.Archive, a.Size, archive.ReadOptions{Unseal: cfg.ids.Unseal})
	if err != nil {
		return "", err
	}
	sum, _ := a.Receipt.Summary() // readAdopteeReceipt took only a receipt that records an archive
	res, err := r.Verify(ctx, archive.VerifyOptions{Expect: &sum})
	if err := verdict(ctx, res, err); err != nil {
		return "", fmt.Errorf("does not verify against receipt %s: %w; nothing copied", receiptPath, err)
	}
	if err := a.Receipt.StatusProven("its receipt", r.HasManifest, res.RecordedStatus); err != nil {
		return "", fmt.Errorf("%w; nothing copied", err)
	}
	// status shows the counts of the receipt copied into the set, and its metrics carry them.
	if err := a.Receipt.CountsProven("its receipt", format.Counts{Files: res.Files, Bytes: res.Bytes, Dirs: res.Dirs}, res.Notes); err != nil {
		return "", fmt.Errorf("%w; nothing copied", err)
	}
	holds, err := a.Source, entriesUnder(r.Entries, a.Source, "its receipt names")
	if a.Source == backupset.Sealed {
		holds, err = soleSource(r.Entries)
	}
	if err != nil {
		return "", fmt.Errorf("%w; nothing copied", err)
	}
	if cfg.activate && !cfg.allowIncomplete && a.Receipt.Status != format.Complete {
		return "", fmt.Errorf("the backup is %s: not adopting it to activate it (--allow-incomplete activates it; without --activate it is only adopted); nothing copied", a.Receipt.Status)
	}
	return holds, nil
}

// openRegular opens the file at path for reading (following a symlink: the user named the
// path) without blocking on a FIFO, and refuses anything but a regular file. It returns the
// file and its size.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: errors.New("is " + atomicfile.DescribeType(info.Mode()))}
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}
