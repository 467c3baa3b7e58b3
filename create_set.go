package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/report"
)

// setOnlyFlags only mean something for a run into a backup set.
var setOnlyFlags = append([]string{"wait", "activate-incomplete"}, keepNames...)

// validateSet decides whether the run writes into a backup set: --output-dir given
// explicitly and no -o. A set keeps every receipt beside its archive, so --receipt is refused.
func (cfg *createConfig) validateSet(flags *pflag.FlagSet, wait time.Duration, activate bool, keep *keepFlags) error {
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
	dir, err := filepath.Abs(cfg.outputDir)
	if err != nil {
		return err
	}
	cfg.set = &setConfig{dir: dir, wait: wait, activateIncomplete: activate, keep: policy, prune: keep.given()}
	return nil
}

// lock creates the set folder and takes its lock before anything else is written. It
// refuses a set whose LATEST names another source's archive: one set, one source, so that
// restore DIR and pruning never mix two.
func (set *setConfig) lock(ctx context.Context, source string, stderr io.Writer) (*backupset.Lock, int) {
	if err := os.MkdirAll(set.dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "backup: failed: output folder %s: %v\n", set.dir, cause(err))
		return nil, exitFailed
	}
	lock, code := lockSet(ctx, set.dir, set.wait, "backup", stderr)
	if lock == nil {
		return nil, code
	}
	if _, err := lock.RemoveStale(); err != nil {
		fmt.Fprintf(stderr, "backup: %s: could not remove a killed run's temp file: %v\n", set.dir, err)
	}
	name, err := backupset.PointerName(set.dir)
	if err != nil {
		// A damaged pointer does not stop a backup: this run replaces it once verified.
		fmt.Fprintf(stderr, "backup: %s; this run replaces it if it is complete and verified\n", setError(set.dir, err))
	} else if other := backupset.SourceOf(name); name != "" && other != source {
		lock.Release()
		fmt.Fprintf(stderr, "backup: failed: %s is the backup set of %q (LATEST names %s); back up %q into a folder of its own\n",
			set.dir, other, name, source)
		return nil, exitFailed
	}
	return lock, 0
}

// finishSet activates the new archive when the run allows it, then prunes, and returns the
// run's exit code. A backup that is not complete never prunes.
func (c *creation) finishSet(ctx context.Context, lock *backupset.Lock, rc *report.Receipt, stdout, stderr io.Writer) int {
	name := filepath.Base(c.out.archive)
	activate := rc.Status == report.Complete || rc.Status == report.Incomplete && c.cfg.set.activateIncomplete
	if !activate {
		c.print(rc, stdout, stderr)
		fmt.Fprintf(stderr, "backup: LATEST not moved: the backup is %s\n", rc.Status)
		return exitCode(rc, nil)
	}
	var verifyErr error
	err := lock.Activate(name, c.cfg.set.activateIncomplete, func(path string) error {
		if c.cfg.verify {
			return nil // --verify read these bytes back already, before the rename
		}
		verifyErr = c.readBack(ctx, path, archive.Summary{Size: rc.Archive.Size, SHA256: rc.Archive.SHA256})
		return verifyErr
	})
	if verifyErr != nil && ctx.Err() == nil {
		rc = c.markDamaged(rc, verifyErr, stderr)
	}
	c.print(rc, stdout, stderr)
	switch {
	case ctx.Err() != nil:
		// The archive is whole, only not checked: its receipt stands, LATEST stays.
		fmt.Fprintln(stderr, "backup: interrupted while verifying; LATEST not moved")
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "backup: LATEST not moved: %v\n", err)
		return exitFailed
	}
	if !c.cfg.quiet || rc.Status != report.Complete {
		fmt.Fprintf(stderr, "backup: LATEST -> %s\n", name)
	}
	if rc.Status != report.Complete || !c.cfg.set.prune {
		return exitCode(rc, nil)
	}
	plan, err := lock.Prune(c.cfg.set.keep, false)
	if !c.cfg.quiet {
		writePruned(stderr, plan)
	}
	if err != nil {
		fmt.Fprintf(stderr, "backup: prune: %s\n", setError(c.cfg.set.dir, err))
		return exitFailed
	}
	return exitCode(rc, nil)
}

// markDamaged records in the receipt that the archive failed its read-back: the receipt
// must not keep calling it complete, and as a failed run it is superseded by the next good
// one.
func (c *creation) markDamaged(rc *report.Receipt, verifyErr error, stderr io.Writer) *report.Receipt {
	damaged := *rc
	damaged.Status = report.Failed
	damaged.Error = fmt.Sprintf("archive %s failed verification: %v", c.out.archive, verifyErr)
	data, err := damaged.Marshal()
	if err == nil {
		err = atomicfile.WriteFile(c.out.receipt, data, 0o600)
	}
	if err != nil {
		fmt.Fprintf(stderr, "backup: could not write receipt %s: %v\n", c.out.receipt, cause(err))
	}
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
