package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
	"backup/report"
)

// errInterrupted is the fatal error of a run stopped by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// creation is one run of backup create.
type creation struct {
	cfg     createConfig
	stdout  io.Writer // where -o - sends the archive
	rec     *report.Recorder
	started time.Time
	out     outputPaths
	w       *archive.Writer    // nil in a dry run
	ref     *archive.Reference // unchanged files' entries are copied from it; nil: a full run
	owners  archive.Owners
	// manifest is the manifest the archive ends with, and manifestSum the SHA-256 of its
	// bytes, for the read-back; set once the archive is closed.
	manifest    *format.Manifest
	manifestSum format.Digest

	events        *report.Events         // --json-lines; nil without
	current       atomic.Pointer[string] // the file last handed to the archive, for the progress line
	hooks         []format.Hook          // what the --exec-before hooks did, for the receipt
	final         *format.Receipt        // the receipt of the outcome, once there is one
	written       bool                   // final is at out.receipt (the run wrote it)
	latestMoved   bool                   // in a set: LATEST names this run's archive
	outDir        fs.FileInfo            // the folder snapshots are staged in (see stagingDir); nil in a dry run
	outDirName    string                 // its stored name, once the walk met it inside a SOURCE
	wouldSnapshot []format.WouldCopy     // in a dry run, the files that would be snapshotted
	// upload is the archive's unfinished upload into a set in a bucket; nil once completed
	// or aborted, and for any other output.
	upload *s3store.Upload
	// receiptETag is the receipt's in the bucket, once written.
	receiptETag string
	// pick, for a restore's before-state, names the paths the walk takes (and the folders
	// above them); nil takes all. created goes into the manifest (Manifest.Created).
	pick    map[string]bool
	created []format.Created
}

// gcPercent is the GC target of a backup run, unless GOGC says otherwise. What a backup keeps
// (the central directory, the manifest's list) only grows, and its garbage is per-file
// buffers: collecting at 1.4 times the live heap instead of 2 keeps a million-file backup
// near 510 MiB instead of 690, at the same CPU time (measured; see BENCHMARKS.md).
const gcPercent = 40

func createBackup(cfg createConfig, stdout, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
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
// outcome leaves its receipt in c.final, for the metrics file, the hooks and --json.
func (c *creation) execute(ctx context.Context, stderr io.Writer) int {
	cfg := c.cfg
	var lock *backupset.Lock
	if cfg.set != nil && !cfg.dryRun {
		// Before anything is written: a run that cannot take the set (locked, refused by the
		// bucket, another source's) leaves no trace in it, but says so everywhere else.
		var code int
		var err error
		if lock, code, err = cfg.set.lock(ctx, cfg.sources[0].name, stderr); lock == nil {
			c.final = c.receipt(nil, err)
			return code
		}
		defer releaseSet(lock, "backup", stderr)
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
		sources[i] = s.path
	}
	return c.rec.Receipt(report.Run{
		ToolVersion:   version,
		Started:       c.started,
		Finished:      time.Now(),
		DryRun:        c.cfg.dryRun,
		Sources:       sources,
		Archive:       arch,
		Err:           err,
		Hooks:         c.hooks,
		WouldSnapshot: c.wouldSnapshot,
	})
}

// run backs up the sources and returns the receipt, written next to the archive; or the
// fatal error that stopped it, with nothing at the final path.
func (c *creation) run(ctx context.Context, stderr io.Writer) (*format.Receipt, error) {
	out, err := c.cfg.pickOutput(ctx, c.started)
	if err != nil {
		return nil, err
	}
	c.out = out
	if err := c.checkSources(); err != nil {
		return nil, err
	}
	if c.ref, err = c.openReference(ctx, stderr); err != nil {
		return nil, err
	}
	if c.ref != nil {
		defer c.ref.Close()
	}
	if c.cfg.dryRun {
		if err := c.walk(ctx); err != nil {
			return nil, err
		}
		return c.receipt(nil, nil), nil
	}
	if err := c.openArchive(ctx); err != nil {
		return nil, err
	}
	rc, err := c.write(ctx, stderr)
	if err != nil {
		c.w.Abort()
		c.abortUpload()
	}
	return rc, err
}

func (c *creation) checkSources() error {
	for _, s := range c.cfg.sources {
		info, err := os.Stat(s.path)
		if err != nil {
			return fmt.Errorf("source %s: %w", s.path, cause(err))
		}
		if !info.IsDir() && !info.Mode().IsRegular() {
			return fmt.Errorf("source %s: not a directory or a regular file", s.path)
		}
	}
	return nil
}

func (c *creation) openArchive(ctx context.Context) error {
	dir := c.stagingDir()
	opts := archive.Options{
		Method:    c.cfg.method,
		Level:     c.cfg.level,
		Jobs:      c.cfg.jobs,
		Reference: c.ref,
		Fresh:     c.fresh,
		OnFile:    c.rec.File,
		OnDir:     c.rec.Dir,
		OnSymlink: c.rec.Symlink,
		OnCopy:    c.rec.Copy,
		OnSkip:    c.rec.Skip,
		OnWarn:    c.rec.Warn,
	}
	if c.cfg.sqlite {
		opts.Open = snapshotOpener(ctx, dir, c.cfg.sqliteTimeout)
		c.stagingDirInfo(dir)
	}
	if c.cfg.metricsFile != "" {
		c.leaveOut(c.cfg.metricsFile)
	}
	if st := c.remoteSet(); st != nil {
		return c.openUpload(ctx, st, opts)
	}
	c.leaveOut(c.out.receipt)
	if c.cfg.toStdout() {
		return c.openStdout(ctx, opts)
	}
	w, err := archive.Create(ctx, dir, filepath.Base(c.out.archive), opts)
	if err != nil {
		return fmt.Errorf("creating archive %s: %w", c.out.archive, cause(err))
	}
	c.w = w
	c.leaveOut(w.TempPath(), c.out.archive)
	return nil
}

// leaveOut keeps the files at paths, the run's own outputs as an earlier run left them, out of
// the archive (rule self) when they are inside a SOURCE: they are being replaced.
func (c *creation) leaveOut(paths ...string) {
	for _, p := range paths {
		if info, err := os.Lstat(p); err == nil {
			c.cfg.rules.Self = append(c.cfg.rules.Self, info)
		}
	}
}

// write walks into the archive, then puts the archive and its receipt in place: the receipt
// is staged first, so that a full disk fails the run before anything moves.
func (c *creation) write(ctx context.Context, stderr io.Writer) (*format.Receipt, error) {
	p := c.startProgress(ctx, stderr)
	err := c.walk(ctx)
	if err == nil {
		err = c.w.Wait()
	}
	if c.ref != nil {
		c.ref.Close() // every entry it gives is in the archive by now
	}
	p.Stop()
	if err != nil {
		return nil, c.archiveError(err)
	}
	m := c.rec.Manifest(version)
	m.Created = c.created
	sum, err := c.w.CloseManifest(m)
	if err != nil {
		return nil, c.archiveError(err)
	}
	c.manifest, c.manifestSum = m, sum.ManifestSHA256
	if c.cfg.verify && c.upload == nil {
		if err := c.verify(ctx, sum.Summary); err != nil {
			return nil, err
		}
	}
	// An interrupt that came while the archive was finished and synced stops the run here,
	// before anything is published: nothing checks for it from here on.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rc := c.receipt(&format.ArchiveInfo{Path: c.out.archive, Size: sum.Size, SHA256: sum.SHA256}, nil)
	if c.upload != nil {
		return rc, c.placeRemote(ctx, rc)
	}
	if c.cfg.toStdout() {
		return rc, c.placeStdout(rc)
	}
	return rc, c.place(ctx, rc)
}

// place publishes the archive and its receipt as one unit: after a failure the final paths
// hold the old pair (or nothing), and the error says so. An interrupt that comes while the
// receipt is staged (synced) stops it before the first rename.
func (c *creation) place(ctx context.Context, rc *format.Receipt) error {
	data, err := rc.Marshal()
	if err != nil {
		return err
	}
	staged, err := atomicfile.Stage(c.out.receipt, data, 0o600)
	if err != nil {
		return fmt.Errorf("writing receipt %s: %w", c.out.receipt, cause(err))
	}
	if err := ctx.Err(); err != nil {
		staged.Discard()
		return err
	}
	if c.cfg.set != nil {
		// In a set a crash between the renames must leave the receipt alone (a run prune
		// removes once superseded), never the archive (kept for ever as unknown).
		err = c.w.CommitLast(c.out.archive, c.cfg.force, staged)
	} else {
		err = c.w.Commit(c.out.archive, c.cfg.force, staged)
	}
	c.written = err == nil
	switch {
	case errors.Is(err, fs.ErrExist):
		return &outputExists{c.out.archive}
	case err != nil:
		return fmt.Errorf("putting archive %s and receipt %s in place: %w", c.out.archive, c.out.receipt, err)
	}
	return nil
}

// outputExists is the error of an output taken by another run while this one wrote it: a
// name chosen as free (a before-state's) can be chosen again.
type outputExists struct{ path string }

func (e *outputExists) Error() string {
	return fmt.Sprintf("output %s exists (use --force to replace it)", e.path)
}

func (e *outputExists) Unwrap() error { return fs.ErrExist }

func (c *creation) archiveError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("writing archive %s: %w", c.out.archive, cause(err))
}

// writeFailedReceipt records a failed run, unless an archive is at the final path: its
// receipt must keep describing it.
func (c *creation) writeFailedReceipt(ctx context.Context, rc *format.Receipt, stderr io.Writer) {
	if c.cfg.dryRun || c.out.receipt == "" {
		return
	}
	var err error
	if c.remoteSet() != nil {
		err = c.writeRemoteReceipt(ctx, rc)
	} else if c.cfg.toStdout() || !exists(c.out.archive) {
		var data []byte
		data, err = rc.Marshal()
		if err == nil {
			err = atomicfile.WriteFile(c.out.receipt, data, 0o600)
		}
	}
	if err != nil && !c.cfg.quiet {
		fmt.Fprintf(stderr, "backup: could not write receipt %s: %v\n", c.out.receipt, cause(err))
	}
	c.written = err == nil
}

// print prints the run's summary on stderr; every outcome with a receipt passes here once,
// so it also keeps that receipt for what follows the run (metrics, hooks, --json).
func (c *creation) print(rc *format.Receipt, stderr io.Writer) {
	c.final = rc
	if c.cfg.quiet && rc.Status == format.Complete {
		return
	}
	receipt := c.out.receipt
	if c.cfg.dryRun {
		receipt = ""
	}
	report.WriteSummary(stderr, rc, receipt)
	c.printWouldSnapshot(stderr)
}
