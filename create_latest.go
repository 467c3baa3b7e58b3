package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"backup/backupset"
	"backup/format"
)

// finishSet activates the new archive when the run allows it, then prunes, and returns the
// run's exit code. A backup that is not complete never prunes.
func (c *creation) finishSet(ctx context.Context, lock *backupset.Lock, rc *format.Receipt, stderr io.Writer) int {
	if !c.activates(rc) {
		c.print(rc, stderr)
		sayf(stderr, "backup: LATEST not moved: the backup is %s\n", rc.Status)
		return exitCode(rc, nil)
	}
	name := filepath.Base(c.paths().archive)
	handMade := lock.CurrentActivation(ctx)
	rc, err := c.activate(ctx, lock, name, rc, stderr)
	c.print(rc, stderr)
	if err != nil {
		c.failure = "LATEST not moved: " + err.Error()
		return latestNotMoved(ctx, err, stderr)
	}
	// LATEST moved: an interrupt that came meanwhile stopped nothing, and only a prune
	// below can still stop for it.
	c.latestMoved = true
	c.sayMoved(name, handMade, rc, stderr)
	c.keepCopy(rc, stderr)
	if rc.Status != format.Complete || !c.cfg.set.prune {
		return exitCode(rc, nil)
	}
	return c.pruneSet(ctx, lock, rc, stderr)
}

// activates says whether a run that ended with rc may become LATEST.
func (c *creation) activates(rc *format.Receipt) bool {
	return rc.Status == format.Complete || rc.Status == format.Incomplete && c.cfg.set.activateIncomplete
}

// activate points LATEST at the archive name once it reads back, and returns the receipt as
// it then stands (failed, when the read-back found the archive damaged) and why LATEST did
// not move. The receipt in place says the archive was not read back until it has been (see
// notReadBack), so the read-back comes before the checks of Activate, which would refuse it.
func (c *creation) activate(ctx context.Context, lock *backupset.Lock, name string, rc *format.Receipt, stderr io.Writer) (*format.Receipt, error) {
	if c.readsBackInPlace(rc) {
		err := c.readBackInSet(ctx, name, rc)
		if err == nil {
			err = ctx.Err() // an interrupt as the read-back ended: the run stops here
		}
		if err != nil {
			return c.markDamaged(ctx, rc, err, stderr), notActivating(name, err)
		}
		if err := c.target.replace(ctx, rc); err != nil {
			c.written = false
			failed := *c.notReadBack(rc)
			failed.Error = fmt.Sprintf("archive %s read back, but its receipt could not be written: %v", c.paths().archive, cause(err))
			return &failed, notActivating(name, fmt.Errorf("writing its receipt: %w", err))
		}
	}
	err := lock.Activate(ctx, name, c.cfg.set.activateIncomplete, func(string) error { return nil })
	if err != nil && ctx.Err() != nil && c.written && backupset.NotMoved(err) {
		// Interrupted before LATEST's write was sent (a folder's receipt is written whatever
		// the context): the receipt says the run stopped, as its exit code, --json and the
		// metrics do. After the write, whether LATEST moved may not be known (a bucket's lost
		// answer), and the receipt stands: LATEST never names a failed one.
		rc = c.markFailed(ctx, rc, fmt.Sprintf("interrupted before LATEST moved to archive %s", c.paths().archive), stderr)
	}
	return rc, err
}

func notActivating(name string, err error) error {
	return fmt.Errorf("not activating %s: %w", format.QuoteName(name), err)
}

// readsBackInPlace says whether the archive is read back once in place, before LATEST may
// name it: in a set, for a run that may become LATEST; an upload, which cannot be read
// before it completes, always; a file unless --verify read these bytes back already, before
// the rename.
func (c *creation) readsBackInPlace(rc *format.Receipt) bool {
	if c.cfg.set == nil || c.cfg.dryRun || !c.activates(rc) {
		return false
	}
	_, upload := c.target.(*uploadTarget)
	return upload || !c.cfg.verify
}

// notReadBack is rc as the receipt says it until the archive has read back: failed, not
// verified. A run killed meanwhile (SIGKILL, a power cut) runs no handler to say so, and an
// archive that was not read back must not count as a complete backup for prune and status;
// once it reads back, rc replaces it, before LATEST moves.
func (c *creation) notReadBack(rc *format.Receipt) *format.Receipt {
	pending := *rc
	pending.Status = format.Failed
	pending.Error = fmt.Sprintf("archive %s not verified: the run that wrote it ended before reading it back", c.paths().archive)
	return &pending
}

// readBackInSet reads the archive called name back before LATEST may name it.
func (c *creation) readBackInSet(ctx context.Context, name string, rc *format.Receipt) error {
	if up, ok := c.target.(*uploadTarget); ok {
		sum, _ := rc.Summary()
		return up.readBack(ctx, sum, c.res, c.cfg.identities)
	}
	return c.res.ReadBack(ctx, filepath.Join(c.cfg.set.dir, name))
}

// latestNotMoved says why LATEST stays, and returns the exit code.
func latestNotMoved(ctx context.Context, err error, stderr io.Writer) int {
	if ctx.Err() != nil {
		// The run stopped before LATEST moved: its receipt says failed now, LATEST stays.
		fmt.Fprintln(stderr, "backup: interrupted; LATEST not moved")
		return exitInterrupted
	}
	sayf(stderr, "backup: LATEST not moved: %v\n", err)
	return exitFailed
}

// sayMoved says that LATEST names the archive now, and from where it moved when someone had
// activated another archive by hand.
func (c *creation) sayMoved(name string, handMade *backupset.Activation, rc *format.Receipt, stderr io.Writer) {
	if !c.cfg.quiet || rc.Status != format.Complete {
		sayf(stderr, "backup: LATEST -> %s\n", format.QuoteName(name))
	}
	if handMade != nil && handMade.Archive != name && !c.cfg.quiet {
		sayf(stderr, "backup: LATEST moved forward from %s, activated by hand at %s\n", format.QuoteName(handMade.Archive), handMade.At.Local().Format(time.RFC3339))
	}
}

// pruneSet prunes the set after a complete run, and returns the exit code.
func (c *creation) pruneSet(ctx context.Context, lock *backupset.Lock, rc *format.Receipt, stderr io.Writer) int {
	plan, err := lock.Prune(ctx, c.cfg.set.keep, false)
	// A prune that stopped fails the run: -q keeps quiet about a good run only, and cron's
	// mail must say what left the set before the error that follows.
	if !c.cfg.quiet || err != nil {
		writePruned(stderr, plan, err != nil)
	}
	if err == nil {
		return exitCode(rc, nil)
	}
	if ctx.Err() != nil {
		// What the interrupt cut short says only "context canceled"; the runs deleted
		// before it are listed above, the rest stay.
		c.failure = "prune: interrupted; the runs not listed above stay in the set"
		sayf(stderr, "backup: %s\n", c.failure)
		return exitInterrupted
	}
	c.failure = "prune: " + setError(c.cfg.set.dir, err)
	sayf(stderr, "backup: %s\n", c.failure)
	return exitFailed
}

// markDamaged records in the receipt that the archive failed its read-back, or that an
// interrupt stopped the read-back before it was done: the receipt must not keep calling
// complete an archive that did not read back (prune and status would count it as the newest
// good backup), and as a failed run it is superseded by the next good one.
func (c *creation) markDamaged(ctx context.Context, rc *format.Receipt, verifyErr error, stderr io.Writer) *format.Receipt {
	why := fmt.Sprintf("archive %s failed verification: %v", c.paths().archive, verifyErr)
	if ctx.Err() != nil {
		why = fmt.Sprintf("interrupted while archive %s was read back: not verified", c.paths().archive)
	}
	return c.markFailed(ctx, rc, why, stderr)
}

// markFailed replaces the receipt the run wrote with rc failed for why, and returns it.
func (c *creation) markFailed(ctx context.Context, rc *format.Receipt, why string, stderr io.Writer) *format.Receipt {
	damaged := *rc
	damaged.Status = format.Failed
	damaged.Error = why
	err := c.target.replace(ctx, &damaged)
	if err != nil {
		sayf(stderr, "backup: could not write receipt %s: %v\n", c.paths().receipt, cause(err))
	}
	c.written = err == nil
	return &damaged
}

// writePruned prints one line per deleted backup and a count, as create does after a good
// run. A prune that stopped returns only the decisions carried out, so it gets no count of
// what was kept: that would leave out every run after the one that failed.
func writePruned(w io.Writer, plan []backupset.Decision, stopped bool) {
	kept := 0
	for _, d := range plan {
		if d.Keep {
			kept++
			continue
		}
		left := ""
		if d.ReceiptLeft {
			left = "; its receipt left"
		}
		fmt.Fprintf(w, "  deleted %s (%s, %s%s)\n", format.QuoteName(d.Name), d.State, format.EscapeText(d.Reasons[0]), left)
	}
	if stopped {
		fmt.Fprintf(w, "backup: pruned %d, then stopped\n", len(plan)-kept)
		return
	}
	fmt.Fprintf(w, "backup: pruned %d, kept %d\n", len(plan)-kept, kept)
}
