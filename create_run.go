package main

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"time"

	"backup/backupset"
	"backup/engine"
	"backup/format"
	"backup/report"
)

// errInterrupted is the fatal error of a run stopped by a stop signal (stopSignals).
var errInterrupted = errors.New(format.ErrorInterrupted)

// creation is one run of backup create, the command's side of it: the engine backs up (see
// package engine); this decides where the archive goes, renders the receipt from what the
// engine told the Recorder, keeps the set, prints, and maps the outcome to an exit code.
type creation struct {
	cfg     createConfig
	stdout  io.Writer // where -o - sends the archive
	started time.Time
	rec     *report.Recorder
	events  *report.Events // --json-lines; nil without
	// target is where the archive and its receipt go; nil until their names are picked.
	target target
	// written says the run's receipt is at its path (the run wrote it).
	written bool
	// pick narrows the run to a restore's before-state; the zero value takes everything.
	pick picking
	// res is what the engine made, once it has.
	res *engine.Result

	hooks       []format.Hook   // what the --exec-before hooks did, for the receipt
	final       *format.Receipt // the receipt of the outcome, once there is one
	latestMoved bool            // in a set: LATEST names this run's archive
	// failure is why a run whose receipt records no error still fails (LATEST not moved, the
	// prune after it), for the after hooks' BACKUP_ERROR.
	failure string
	// lock is the set's, held from execute until finish has written all the run writes.
	lock *backupset.Lock
	// refReceipt is the receipt the reference is checked against when it is not beside
	// it (a local copy of a bucket set's archive); nil otherwise.
	refReceipt *format.Receipt
}

// picking narrows a run to what a restore replaces, for its before-state (restore_undo.go).
type picking struct {
	names   map[string]bool  // engine.Options.Pick; nil takes everything
	created []format.Created // what the manifest records as created (Manifest.Created)
	// replaced is what the manifest records as written over (Manifest.Replaced).
	replaced []format.Created
}

// gcPercent is the GC target of a backup run, unless GOGC says otherwise; limitMemory caps
// the heap of a large one. What a backup keeps (the central directory, the manifest's list)
// only grows, and its garbage is per-file buffers. Measured on 2026-12-02, with the cap:
// Go's default (100) let the bench corpus's run (~40 MB live) reach 99 MiB of peak RSS
// against the 100 the targets allow; 40, the target before the cap, held it at 75 MiB but
// collected so often that an unchanged set run took 4% more time (0.69 against 0.66 s,
// medians of 5 interleaved runs); 60 gives 77 to 90 MiB and 0.68 s, and for a million
// files 387 MiB and 12.8 s (40: 357 MiB, 12.9 s; 100: 388 MiB, 11.9 s), as bench/notes.md
// records.
const gcPercent = 60

func createBackup(cfg createConfig, stdout, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	defer limitMemory()()
	stderr = newStopOnError(stderr) // as run() made it; hooks write to the file beneath
	ctx, stop := interruptible()
	defer stop()
	c := &creation{cfg: cfg, stdout: stdout, rec: report.NewRecorder(cfg.policy), started: time.Now()}
	if cfg.jsonLines {
		c.events = report.NewEvents(stdout, "create")
	}
	var list io.Writer
	if cfg.verbose {
		list = stderr
	}
	c.rec.Tell(c.events, list)
	code := c.execute(ctx, stderr)
	c.finish(code, stdout, stderr)
	return code
}

// execute runs the backup, under the set's lock for a set, and returns the exit code; every
// outcome leaves its receipt in c.final, for the metrics file, the hooks and --json. The
// lock stays held (c.lock) for finish, which writes the metrics and the receipt's hooks.
func (c *creation) execute(ctx context.Context, stderr io.Writer) int {
	cfg := c.cfg
	var lock *backupset.Lock
	if cfg.set != nil && !cfg.dryRun {
		// Before anything is written: a run that cannot take the set (locked, refused by the
		// bucket, another source's) leaves no trace in it, but says so everywhere else.
		var code int
		var err error
		if lock, code, err = cfg.lockSet(ctx, stderr); lock == nil {
			c.final = c.receipt(nil, err)
			return code
		}
		c.lock = lock
		// The run starts once it holds the set: its name and started_at order it after
		// every run that held the lock before, however long it waited (--wait).
		c.started = time.Now()
		defer c.dropCopy()
	}
	if code, ok := c.runBefore(ctx, stderr); !ok {
		return code
	}
	rc, err := c.run(ctx, stderr)
	if err == nil && lock != nil {
		return c.finishSet(ctx, lock, rc, stderr)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = errInterrupted
		}
		rc = c.receipt(nil, err)
	}
	c.print(rc, stderr)
	if err != nil {
		c.writeFailedReceipt(ctx, rc, stderr) // after the summary: the cause of the failure comes first
	}
	return exitCode(rc, err)
}

func exitCode(rc *format.Receipt, err error) int {
	switch {
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case rc.Status == format.Failed:
		return exitFailed
	case rc.Status == format.Incomplete:
		return exitIncomplete
	}
	return exitComplete
}

func (c *creation) receipt(arch *format.ArchiveInfo, err error) *format.Receipt {
	sources := make([]string, len(c.cfg.sources))
	for i, s := range c.cfg.sources {
		sources[i] = s.Path
	}
	rc := c.rec.Receipt(report.Run{
		ToolVersion:   version,
		Started:       c.started,
		Finished:      time.Now(),
		DryRun:        c.cfg.dryRun,
		Sources:       sources,
		Archive:       arch,
		Err:           err,
		Hooks:         c.hooks,
		WouldSnapshot: c.wouldSnapshot(),
	})
	rc.Encryption = c.encryption()
	return rc
}

// encryption is the receipt's record of how the archive is encrypted; nil for a plain one.
// The receipt written beside the archive is then rc.Stored(): it names no path.
func (c *creation) encryption() *format.Encryption {
	r := c.cfg.recipients
	if r == nil {
		return nil
	}
	enc := &format.Encryption{Format: format.AgeFormat, Recipients: r.Names()}
	if c.res != nil && !c.cfg.dryRun && (c.cfg.set != nil || c.cfg.verify) {
		enc.ReadBack = c.res.ReadBackChecks()
	}
	return enc
}

// run backs up the sources (the engine's one call) and returns the receipt, in place beside
// the archive; or the fatal error that stopped it, with nothing at the final path.
func (c *creation) run(ctx context.Context, stderr io.Writer) (*format.Receipt, error) {
	c.prepareCache()
	t, err := c.pickTarget(ctx)
	if err != nil {
		return nil, err
	}
	c.target = t
	// The sources first, as the engine will: a missing one is the error, whatever else is.
	if c.cfg.unreachable != nil {
		return nil, c.cfg.unreachable
	}
	if err := engine.CheckSources(c.cfg.sources); err != nil {
		return nil, err
	}
	reference, err := c.referencePath(ctx, stderr)
	if err != nil {
		return nil, err
	}
	opts := c.engineOptions(reference)
	if !c.cfg.dryRun {
		if opts.Output, err = t.open(ctx); err != nil {
			return nil, err
		}
	}
	e := engine.New(opts)
	e.Hooks = c.reporter(ctx, e, stderr)
	res, err := e.Run(ctx)
	if err != nil {
		t.abort()
		return nil, err
	}
	c.res = res
	if c.cfg.dryRun {
		return c.receipt(nil, nil), nil
	}
	return c.place(ctx, res, stderr)
}

// place puts the archive and its receipt where they go; after a failure nothing new is at
// the final paths.
func (c *creation) place(ctx context.Context, res *engine.Result, stderr io.Writer) (*format.Receipt, error) {
	rc := c.receipt(&format.ArchiveInfo{Path: c.paths().archive, Size: res.Sum.Size, SHA256: res.Sum.SHA256}, nil)
	placed := rc
	if c.readsBackInPlace(rc) {
		placed = c.notReadBack(rc)
	}
	if err := c.target.place(ctx, res, placed); err != nil {
		res.Abort()
		c.target.abort()
		return rc, err
	}
	c.written = true
	c.sayLeft(res, stderr)
	return rc, nil
}

// sayLeft names the old archive and receipt that a --force run replaced but could not
// remove: they stay at temp names, which outside a set nothing else ever removes, and an old
// archive is a whole backup, hidden. The run itself succeeded.
func (c *creation) sayLeft(res *engine.Result, stderr io.Writer) {
	left := []error{res.Left()}
	if t, ok := c.target.(interface{ leftBehind() error }); ok {
		left = append(left, t.leftBehind())
	}
	for _, err := range left {
		if err != nil {
			sayf(stderr, "backup: warning: %s (remove it by hand)\n", format.EscapeText(err.Error()))
		}
	}
}

// paths are the run's archive and receipt, once picked.
func (c *creation) paths() outputPaths {
	if c.target == nil {
		return outputPaths{}
	}
	return c.target.paths()
}

// wouldSnapshot is, in a dry run, the files that would be snapshotted.
func (c *creation) wouldSnapshot() []format.WouldCopy {
	if c.res == nil {
		return nil
	}
	return c.res.WouldSnapshot
}

// writeFailedReceipt records a failed run, unless an archive is at the final path: its
// receipt must keep describing it, and the run wrote none.
func (c *creation) writeFailedReceipt(ctx context.Context, rc *format.Receipt, stderr io.Writer) {
	if c.cfg.dryRun || c.target == nil {
		return
	}
	wrote, err := c.target.writeFailed(ctx, rc)
	if err != nil { // with -q too: the receipt at the path is none, or another run's
		sayf(stderr, "backup: could not write receipt %s: %v\n", c.paths().receipt, cause(err))
	}
	// A receipt left alone is another archive's: the hooks must not get it, nor add to it.
	c.written = wrote && err == nil
}

// print prints the run's summary on stderr; every outcome with a receipt passes here once,
// so it also keeps that receipt for what follows the run (metrics, hooks, --json).
func (c *creation) print(rc *format.Receipt, stderr io.Writer) {
	c.final = rc
	if c.cfg.quiet && rc.Status == format.Complete {
		return
	}
	receipt := c.paths().receipt
	if c.cfg.dryRun {
		receipt = ""
	}
	report.WriteSummary(stderr, rc, receipt)
	c.printWouldSnapshot(stderr)
}
