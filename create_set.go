package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
)

// setOnlyFlags only mean something for a run into a backup set.
var setOnlyFlags = append([]string{"wait", "activate-incomplete"}, keepNames...)

// validateSet decides whether the run writes into a backup set: --output-dir given
// explicitly and no -o. A set keeps every receipt beside its archive, so --receipt is refused.
func (cfg *createConfig) validateSet(flags *pflag.FlagSet, wait time.Duration, activate bool, keep *keepFlags, s3 *s3Flags) error {
	if s3store.IsLocation(cfg.output) {
		return fmt.Errorf("-o %s: a bucket holds backup sets only: --output-dir %s", cfg.output, cfg.output)
	}
	if err := s3.check(cfg.outputDir); err != nil {
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
	// The first SOURCE names the set's archives.
	if err := backupset.CheckSourceName(cfg.sources[0].name); err != nil {
		return fmt.Errorf("source %q: %w; back it up with -o, or rename it", cfg.sources[0].path, err)
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

// lock creates the set folder and takes its lock before anything else is written. It
// refuses a set whose LATEST names another source's archive: one set, one source, so that
// restore DIR and pruning never mix two. Without the lock it returns the exit code and why,
// printed already.
func (set *setConfig) lock(ctx context.Context, source string, stderr io.Writer) (*backupset.Lock, int, error) {
	if set.local() {
		if err := os.MkdirAll(set.dir, 0o755); err != nil {
			err = fmt.Errorf("output folder %s: %w", set.dir, cause(err))
			fmt.Fprintf(stderr, "backup: failed: %v\n", err)
			return nil, exitFailed, err
		}
	}
	lock, code, err := takeLock(ctx, set.store, set.wait, "backup", stderr)
	if lock == nil {
		return nil, code, err
	}
	if _, err := lock.RemoveStale(ctx); err != nil {
		fmt.Fprintf(stderr, "backup: %s: could not remove what a killed run left: %v\n", set.dir, err)
	}
	name, err := lock.Pointer(ctx)
	if err != nil {
		// A damaged pointer does not stop a backup: this run replaces it once verified.
		// One line for all the run does about it: reading every file, since the archive it
		// names cannot be trusted for reuse, and replacing it.
		more := ""
		if set.reusesLatest {
			more = " (reading every file: nothing is reused from it)"
		}
		fmt.Fprintf(stderr, "backup: %s; this run replaces it if it is complete and verified%s\n", setError(set.dir, err), more)
		set.pointerSaid = true
	} else if other := backupset.SourceOf(name); name != "" && other != source {
		lock.Release()
		err := fmt.Errorf("%s is the backup set of %q (LATEST names %s); back up %q into a folder of its own",
			set.dir, other, name, source)
		fmt.Fprintf(stderr, "backup: failed: %v\n", err)
		return nil, exitFailed, err
	}
	return lock, 0, nil
}

// finishSet activates the new archive when the run allows it, then prunes, and returns the
// run's exit code. A backup that is not complete never prunes.
func (c *creation) finishSet(ctx context.Context, lock *backupset.Lock, rc *format.Receipt, stderr io.Writer) int {
	name := filepath.Base(c.out.archive)
	if c.remoteSet() != nil {
		name = c.remoteName()
	}
	activate := rc.Status == format.Complete || rc.Status == format.Incomplete && c.cfg.set.activateIncomplete
	if !activate {
		c.print(rc, stderr)
		fmt.Fprintf(stderr, "backup: LATEST not moved: the backup is %s\n", rc.Status)
		return exitCode(rc, nil)
	}
	handMade := lock.CurrentActivation(ctx)
	var verifyErr error
	err := lock.Activate(ctx, name, c.cfg.set.activateIncomplete, func(name string) error {
		sum, _ := rc.Summary()
		switch {
		case c.remoteSet() != nil:
			// An upload cannot be read before it completes: it is read back here, always.
			verifyErr = c.readBackRemote(ctx, name, sum)
		case c.cfg.verify:
			return nil // --verify read these bytes back already, before the rename
		default:
			verifyErr = c.readBack(ctx, filepath.Join(c.cfg.set.dir, name), sum)
		}
		return verifyErr
	})
	if verifyErr != nil && ctx.Err() == nil {
		rc = c.markDamaged(ctx, rc, verifyErr, stderr)
	}
	c.print(rc, stderr)
	switch {
	case err != nil && ctx.Err() != nil:
		// The archive is whole, only not checked: its receipt stands, LATEST stays.
		fmt.Fprintln(stderr, "backup: interrupted while verifying; LATEST not moved")
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "backup: LATEST not moved: %v\n", err)
		return exitFailed
	}
	// LATEST moved: an interrupt that came meanwhile stopped nothing, and only a prune
	// below can still stop for it.
	c.latestMoved = true
	if !c.cfg.quiet || rc.Status != format.Complete {
		fmt.Fprintf(stderr, "backup: LATEST -> %s\n", name)
	}
	if handMade != nil && handMade.Archive != name && !c.cfg.quiet {
		fmt.Fprintf(stderr, "backup: LATEST moved forward from %s, activated by hand at %s\n", handMade.Archive, handMade.At.Local().Format(time.RFC3339))
	}
	if rc.Status != format.Complete || !c.cfg.set.prune {
		return exitCode(rc, nil)
	}
	plan, err := lock.Prune(ctx, c.cfg.set.keep, false)
	if !c.cfg.quiet {
		writePruned(stderr, plan)
	}
	if err != nil {
		fmt.Fprintf(stderr, "backup: prune: %s\n", setError(c.cfg.set.dir, err))
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailed
	}
	return exitCode(rc, nil)
}

// markDamaged records in the receipt that the archive failed its read-back: the receipt
// must not keep calling it complete, and as a failed run it is superseded by the next good
// one.
func (c *creation) markDamaged(ctx context.Context, rc *format.Receipt, verifyErr error, stderr io.Writer) *format.Receipt {
	damaged := *rc
	damaged.Status = format.Failed
	damaged.Error = fmt.Sprintf("archive %s failed verification: %v", c.out.archive, verifyErr)
	var err error
	if c.remoteSet() != nil {
		err = c.writeRemoteReceipt(ctx, &damaged)
	} else {
		var data []byte
		data, err = damaged.Marshal()
		if err == nil {
			err = atomicfile.WriteFile(c.out.receipt, data, 0o600)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "backup: could not write receipt %s: %v\n", c.out.receipt, cause(err))
	}
	c.written = err == nil
	return &damaged
}

// writePruned prints one line per deleted backup and a count, as create does after a good
// run.
func writePruned(w io.Writer, plan []backupset.Decision) {
	kept := 0
	for _, d := range plan {
		if d.Keep {
			kept++
			continue
		}
		fmt.Fprintf(w, "  deleted %s (%s, %s)\n", d.Name, d.State, d.Reasons[0])
	}
	fmt.Fprintf(w, "backup: pruned %d, kept %d\n", len(plan)-kept, kept)
}
