package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"backup/backupset"
	"backup/backupset/s3store"
)

// setOnlyFlags only mean something for a run into a backup set.
var setOnlyFlags = append([]string{"wait", "activate-incomplete", "allow-plaintext"}, keepNames...)

// validateSet decides whether the run writes into a backup set: --output-dir given
// explicitly and no -o. A set keeps every receipt beside its archive, so --receipt is refused.
func (cfg *createConfig) validateSet(flags *pflag.FlagSet, wait time.Duration, activate bool, keep *keepFlags, s3 *s3Flags) error {
	if s3store.IsLocation(cfg.output) {
		return fmt.Errorf("-o %s: a bucket holds backup sets only: --output-dir %s", cfg.output, cfg.output)
	}
	if err := s3.check(cfg.output, cfg.outputDir); err != nil {
		return err
	}
	if flags.Changed("output-dir") && cfg.output != "" {
		return fmt.Errorf("-o and --output-dir cannot be used together: -o names the archive, --output-dir a backup set")
	}
	if !flags.Changed("output-dir") {
		for _, name := range setOnlyFlags {
			if flags.Changed(name) {
				return fmt.Errorf("--%s needs a backup set: --output-dir DIR, without -o", name)
			}
		}
		return nil
	}
	if cfg.receipt != "" {
		return fmt.Errorf("--receipt cannot be used with a backup set (--output-dir): the set keeps each receipt beside its archive")
	}
	policy, err := keep.validated()
	if err != nil {
		return err
	}
	// A set is the runs of one source: its archives' names say it, and activate, verify,
	// list and restore of the set check the entries against it, so a second SOURCE would
	// make runs the set could not use.
	if len(cfg.sources) > 1 {
		return fmt.Errorf("a backup set holds one SOURCE, %d given: back each up into a set of its own, or back up the folder that holds them", len(cfg.sources))
	}
	// The SOURCE names the set's plain archives (an encrypted one's name holds none).
	if err := backupset.CheckSourceName(cfg.sources[0].Name); err != nil && cfg.recipients == nil {
		return fmt.Errorf("source %q: %w; back it up with -o, or rename it", cfg.sources[0].Path, err)
	}
	if err := s3store.CheckNameInBucket(cfg.sources[0].Name); err != nil && cfg.recipients == nil && s3store.IsLocation(cfg.outputDir) {
		return fmt.Errorf("source %q: %w; back it up with -o, or rename it", cfg.sources[0].Path, err)
	}
	st, err := s3.open(context.Background(), cfg.outputDir)
	if err != nil {
		return err
	}
	cfg.set = &setConfig{dir: st.Location(), store: st, wait: wait, activateIncomplete: activate, keep: policy, prune: keep.given()}
	_, folder := st.(backupset.Folder)
	cfg.set.reusesLatest = folder && !cfg.reuse.reread && cfg.reuse.reference == ""
	return nil
}

// local says whether the set is a folder on this machine, whose files are paths.
func (set *setConfig) local() bool {
	_, ok := set.store.(backupset.Folder)
	return ok
}

// lockSet creates the set folder and takes its lock before anything else is written. It
// refuses a set whose LATEST (or, when LATEST is lost or damaged, whose newest run) is
// another source's archive, or an archive of the other kind, encrypted or plain (see
// checkLatest). Without the lock it returns the exit code and
// why, printed already.
func (cfg *createConfig) lockSet(ctx context.Context, stderr io.Writer) (*backupset.Lock, int, error) {
	set := cfg.set
	if set.local() {
		if err := mkdirFolder(set.dir); err != nil {
			err = fmt.Errorf("output folder %s: %w", set.dir, cause(err))
			sayf(stderr, "backup: failed: %v\n", err)
			return nil, exitFailed, err
		}
	}
	lock, code, err := takeLock(ctx, set.store, set.wait, "backup", stderr, backupset.Acquire)
	if lock == nil {
		return nil, code, err
	}
	if _, err := lock.RemoveStale(ctx); err != nil && ctx.Err() == nil {
		sayf(stderr, "backup: %s: could not remove what a killed run left: %v\n", set.dir, err)
	}
	if cfg.allowPlaintext {
		lock.AllowMixed()
	}
	_, pointerErr := lock.Pointer(ctx)
	// What the set is (its source, encrypted or plain) is said by LATEST, or by its newest
	// run when LATEST is lost or damaged: a lost pointer must not open the set to anything.
	w, err := lock.Witness(ctx, nil)
	code = exitFailed
	switch {
	case err == nil && w.Name != "":
		code, err = cfg.checkLatest(ctx, w, stderr)
	case err == nil && w.Failed != "":
		code, err = cfg.checkFailedKind(w)
	}
	if err != nil && ctx.Err() != nil {
		// What stopped the reading of the set is the interrupt, whatever the request that
		// it cut short says (a bucket's listing: "context canceled").
		code, err = exitInterrupted, errInterrupted
	}
	if err != nil {
		lock.Release()
		sayf(stderr, "backup: failed: %v\n", err)
		return nil, code, err
	}
	if pointerErr != nil {
		// A damaged pointer does not stop a backup: this run replaces it once verified.
		// One line for all the run does about it: reading every file, since the archive it
		// names cannot be trusted for reuse, and replacing it.
		more := ""
		if set.reusesLatest {
			more = " (reading every file: nothing is reused from it)"
		}
		sayf(stderr, "backup: %s; this run replaces it if it is complete and verified%s\n", setError(set.dir, pointerErr), more)
		set.pointerSaid = true
	}
	return lock, 0, nil
}
