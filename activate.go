package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"backup/archive"
	"backup/backupset"
	"backup/format"
	"backup/seal"
)

const activateLong = `Makes ARCHIVE, a backup of the set in DIR, the target of LATEST: to roll back to an older,
good backup, or to accept a newer one that was kept incomplete (--allow-incomplete). ARCHIVE
is the archive's file name in the set (a path to it inside DIR is taken too).

Under the set's lock, the archive is checked as create's read-back checks a new one: its
receipt must match it and be complete, and the archive is read end to end against the
receipt's size and SHA-256 and the manifest, whose status the receipt must repeat. It must
be a backup of the set's source, by its name and by its entries. Anything wrong leaves
LATEST as it was (exit 1).
LATEST is then replaced atomically, only if no other writer moved it meanwhile, and the
choice is recorded in DIR/LATEST.activated for status. Nothing is deleted.

The activated backup stays LATEST until the next successful create into the set, which moves
LATEST forward as usual and says so; prune never deletes LATEST's target, nor the newest
complete backup.`

const activateExitCodes = `0 activated (or, with --dry-run, would be), 1 refused (LATEST unchanged) or failed,
2 usage, 4 the set is locked by another run, 130 interrupted.`

// activateJSON is what activate --json prints.
type activateJSON struct {
	Dir      string `json:"dir"`
	DirB64   string `json:"dir_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Archive  string `json:"archive"`
	Previous string `json:"previous"` // what LATEST named before; "" for none
	DryRun   bool   `json:"dry_run"`
	Status   string `json:"status"` // the archive's receipt status; "" when activate failed
	// Error says why activate failed, was refused or did not run (exit 1, 4 or 130);
	// LATEST was not moved then.
	Error string `json:"error,omitempty"`
	// replacesDamaged says LATEST was there but named no archive (stderr said why): the
	// line says so rather than "no LATEST".
	replacesDamaged bool
}

type activateConfig struct {
	store           backupset.Store
	name            string
	allowIncomplete bool
	dryRun, json    bool
	wait            time.Duration
	ids             *seal.Identities // --identity: an encrypted archive is read back with them
}

func newActivateCmd() *cobra.Command {
	cmd := newCommand("activate [flags] DIR ARCHIVE", "make a verified backup of a set its LATEST (roll back)", activateLong, activateExitCodes)
	var cfg activateConfig
	flags := cmd.Flags()
	flags.BoolVarP(&cfg.dryRun, "dry-run", "n", false, "check and verify ARCHIVE and say what would change; change nothing")
	flags.BoolVar(&cfg.allowIncomplete, "allow-incomplete", false, "also activate a backup whose receipt says incomplete")
	flags.BoolVar(&cfg.json, "json", false, "print the result as JSON")
	var wait durationFlag
	flags.Var(&wait, "wait", "wait up to `DURATION` for a running backup of the set instead of exiting 4")
	identity := addIdentityFlag(flags, "read an encrypted ARCHIVE back with the identity in `FILE` (required for one); repeatable")
	s3 := addS3Flags(flags)
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stderr := cmd.ErrOrStderr()
		err := refuseEmpty(flags, []string{"identity"}, args, "DIR", "ARCHIVE")
		if len(args) != 2 {
			err = argCount("DIR and ARCHIVE", len(args))
		}
		if err == nil {
			cfg.ids, err = identity.load(stderr, "backup activate")
		}
		if err == nil {
			cfg.store, err = s3.open(cmd.Context(), args[0])
		}
		if err == nil {
			err = checkStatusOutputs(cfg.store, "", cmd.OutOrStdout())
		}
		if err == nil {
			err = checkStdoutNotIdentity(cmd.OutOrStdout(), identity.paths)
		}
		if err == nil {
			cfg.name, err = nameInSet(cfg.store, args[1])
		}
		if err == nil && backupset.IsSealedName(cfg.name) && cfg.ids == nil {
			// What LATEST may name is proven by the archive's manifest, inside the encryption.
			err = needIdentity(cfg.name)
		}
		if err != nil {
			return usageError(stderr, "activate", err)
		}
		cfg.wait = time.Duration(wait)
		return activate(cfg, cmd.OutOrStdout(), stderr)
	})
	return cmd
}

// nameInSet returns the file name ARCHIVE gives: a plain name, or a path to a file directly
// in a folder set.
func nameInSet(st backupset.Store, arg string) (string, error) {
	if filepath.Base(arg) == arg {
		return arg, nil
	}
	f, ok := st.(backupset.Folder)
	abs, err := absPath(arg)
	if !ok || err != nil || !sameFolder(filepath.Dir(abs), f.Dir) {
		return "", fmt.Errorf("ARCHIVE %s: give the archive's name in the set, not a path elsewhere", arg)
	}
	return filepath.Base(abs), nil
}

// sameFolder says whether a and b name one folder: the same path, or the same device and
// inode (one reached through a symlink: DIR lnk and ARCHIVE set/NAME).
func sameFolder(a, b string) bool {
	if a == b {
		return true
	}
	ia, erra := os.Stat(a)
	ib, errb := os.Stat(b)
	return erra == nil && errb == nil && ia.IsDir() && os.SameFile(ia, ib)
}

// activate activates and prints the outcome: --json whatever ended it (the cause in
// "error"), else the line of what it did.
func activate(cfg activateConfig, stdout, stderr io.Writer) int {
	out, code, err := runActivate(cfg, stderr)
	out.Archive, out.DryRun = cfg.name, cfg.dryRun
	out.Dir, out.DirB64 = format.JSONText(cfg.store.Location())
	switch {
	case cfg.json:
		if err != nil {
			out.Error = err.Error()
		}
		if werr := writeJSON(stdout, out); werr != nil {
			outputCut(stderr, "activate", "--json", werr)
		}
	case err == nil:
		writeActivated(stdout, out)
	}
	return code
}

// runActivate takes the set's lock and activates. It returns what it found and did, the
// exit code, and what stopped it, which it has printed.
func runActivate(cfg activateConfig, stderr io.Writer) (activateJSON, int, error) {
	var out activateJSON
	if f, ok := cfg.store.(backupset.Folder); ok {
		// A folder's lock file would create the folder: a mistyped DIR must not.
		if _, err := os.Stat(f.Dir); err != nil {
			return out, exitFailed, stopped(stderr, "activate", err)
		}
	}
	ctx, stop := interruptible()
	defer stop()
	if f, ok := cfg.store.(backupset.Folder); ok && notASet(ctx, f) {
		return out, exitFailed, stopped(stderr, "activate", fmt.Errorf("not activating %s: %s holds no backup set (no LATEST, no lock file, no backup)", cfg.name, f.Dir))
	}
	lock, code, err := takeLock(ctx, cfg.store, cfg.wait, "backup activate", stderr, acquireFor(cfg.dryRun))
	if lock == nil {
		return out, code, err
	}
	defer releaseSet(lock, "backup activate", stderr)
	if !cfg.dryRun {
		if _, err := lock.RemoveStale(ctx); err != nil && ctx.Err() == nil {
			sayf(stderr, "backup activate: %s: could not remove what a killed run left: %v\n", cfg.store.Location(), err)
		}
	}
	previous, err := lock.Pointer(ctx)
	switch {
	case ctx.Err() != nil:
		return out, exitInterrupted, stopped(stderr, "activate", errActivateInterrupted)
	case err != nil:
		sayf(stderr, "backup activate: %v; activating replaces it\n", err)
		out.replacesDamaged = true
	}
	out.Previous = previous
	verify := storeVerifier(ctx, cfg.store, cfg.ids, previous)
	var e backupset.Entry
	if cfg.dryRun {
		e, err = lock.CheckActivation(ctx, cfg.name, cfg.allowIncomplete, verify)
	} else {
		a := backupset.Activation{Archive: cfg.name, At: time.Now().UTC().Truncate(time.Second), By: "activate"}
		e, err = lock.ActivateByHand(ctx, a, cfg.allowIncomplete, verify)
	}
	var unrecorded *backupset.RecordError
	switch {
	case errors.As(err, &unrecorded):
		// LATEST moved: the activation stands, only its record is missing.
		sayf(stderr, "backup activate: %v\n", unrecorded)
	case err != nil && ctx.Err() != nil:
		return out, exitInterrupted, stopped(stderr, "activate", errActivateInterrupted)
	case err != nil:
		return out, exitFailed, stopped(stderr, "activate", errors.New(setError(cfg.store.Location(), err)))
	}
	out.Status = string(e.Receipt.Status)
	return out, exitComplete, nil
}

// writeActivated prints what activate did, or would do.
func writeActivated(w io.Writer, out activateJSON) {
	was := "no LATEST"
	switch {
	case out.Previous != "":
		was = "was " + format.QuoteName(out.Previous)
	case out.replacesDamaged:
		was = "replacing a damaged LATEST"
	}
	verb := "LATEST ->"
	if out.DryRun {
		verb = "dry run: verified; would point LATEST at"
	}
	fmt.Fprintf(w, "%s %s (%s, %s)\n", verb, format.QuoteName(out.Archive), out.Status, was)
}

// storeVerifier reads an archive of the set back as create's read-back does: against its
// receipt's size and SHA-256, every entry against the manifest; an encrypted one decrypted
// with ids. latest is what LATEST names, whose source the archive's must be.
func storeVerifier(ctx context.Context, st backupset.Store, ids *seal.Identities, latest string) backupset.Verifier {
	return func(name string) error {
		data, _, err := st.ReadFile(ctx, name+format.ReceiptSuffix, format.MaxReceiptSize)
		if err != nil {
			return err
		}
		rc, err := format.ParseReceipt(name+format.ReceiptSuffix, data)
		if err != nil {
			return err
		}
		sum, ok := rc.Summary()
		if !ok {
			return errors.New("its receipt records no archive")
		}
		f, err := st.Open(ctx, name)
		if err != nil {
			return err
		}
		defer f.Close()
		unseal := ids.Unseal
		if rc.Encryption != nil {
			unseal = ids.UnsealAge // a plain zip in its place must not become LATEST
		}
		r, err := archive.NewCheckedReader(f, f.Size(), archive.ReadOptions{Unseal: unseal})
		if err != nil {
			return cause(err)
		}
		res, err := r.Verify(ctx, archive.VerifyOptions{Expect: &sum})
		if err := verdict(ctx, res, err); err != nil {
			return err
		}
		// The receipt's status decided whether the archive may be activated; only the
		// manifest, which the SHA-256 just checked covers, proves it.
		if err := rc.StatusProven("its receipt", r.HasManifest, res.RecordedStatus); err != nil {
			return err
		}
		// status shows LATEST's receipt's counts, and its metrics carry them.
		if err := rc.CountsProven("its receipt", format.Counts{Files: res.Files, Bytes: res.Bytes, Dirs: res.Dirs}, res.Notes); err != nil {
			return err
		}
		return entriesOfSet(ctx, st, ids, name, latest, r.Entries)
	}
}

// errActivateInterrupted is why activate stopped on an interrupt; what it cut short would
// only say "context canceled".
var errActivateInterrupted = errors.New("interrupted; LATEST not moved")
