package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"backup/archive"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
	"backup/report"
	"backup/restore"
	"backup/seal"
	"backup/skiprules"
)

const restoreLong = `ARCHIVE may be a backup set's folder: its LATEST backup is restored (a damaged or missing
LATEST is an error; no other archive is picked).

Extracts ARCHIVE into DEST (created when missing), never writing outside it, names byte for
byte. Unsafe names (absolute, "..", duplicates, paths through a symlink in the archive or in
DEST, and backslashes and drive letters in entries not made on Unix) refuse the whole
restore before anything is written, and so do files that exist already with other content,
unless --force. Files already there with the archived content (size, SHA-256) are kept, so a
re-run after an interruption writes only the rest. --force first saves what it replaces in a
before-state archive beside DEST (or in --undo-dir); the command it prints, restore --force
--same-permissions --xattrs BEFORE-STATE DEST (--numeric-owner and --undo-dir too after a
restore with them), undoes the restore.
Each file is written to a temp file, checked against the manifest's SHA-256 (the CRC-32 for
archives another tool made), then renamed into place. Symlinks the backup stored are created
(never followed); symlinks, devices and other special entries of foreign archives are
listed, not created; in a backup's archive, an entry the manifest does not list is damage
and is not written. As root, owners are restored (by name, else by number); setuid and
setgid bits only with --same-permissions; extended attributes with --xattrs.`

const restoreExitCodes = `0 restored, 1 refused or failed (unsafe names, conflicts, unreadable or damaged
archive; damaged entries and those it cannot read are never written), 2 usage, 3 some
entries could not be written (each listed; the rest were), 4 another restore is writing into
DEST (nothing written), 130 interrupted.`

type restoreConfig struct {
	force, json, quiet bool
	jsonLines          bool
	undoDir            string // --undo-dir; "": DEST's parent
	rereads            int    // how often the set was read again, its target gone (see superseded)
	noUndo             bool
	events             *report.Events // --json-lines, once started
	symlinks           string
	owners             restore.Options // NumericOwner, NoSameOwner, SamePermissions, Xattrs, Jobs
	include            *skiprules.Matcher
	includes           []string // include's patterns as given, for the line that none matched
	archive, dest      string
	unreachable        error // DEST as the kernel cannot reach it: the restore's error
	s3                 *s3Flags
	ids                *seal.Identities  // --identity: decrypt an encrypted archive
	lock               *restore.DestLock // DEST's, held from before the plan reads it until the restore ends
	stdoutName         string            // the file inside DEST that stdout goes into (see restore_stdout.go)
	held               *heldStdout       // stdout, held until the plan says it does not write stdoutName
}

// restoreStatus is how a restore ended, as --json prints it; it decides the exit code.
type restoreStatus string

const (
	restoreComplete    restoreStatus = "complete"
	restoreIncomplete  restoreStatus = "incomplete"
	restoreRefused     restoreStatus = "refused"
	restoreFailed      restoreStatus = "failed"
	restoreInterrupted restoreStatus = "interrupted"
	// restoreLocked: another restore is writing into DEST (its lock, restore.DestLock).
	restoreLocked restoreStatus = "locked"
	// restoreUsage: the archive cannot be read as asked (encrypted, and no --identity).
	restoreUsage restoreStatus = "usage"
)

func (s restoreStatus) exitCode() int {
	switch s {
	case restoreComplete:
		return exitComplete
	case restoreIncomplete:
		return exitIncomplete
	case restoreInterrupted:
		return exitInterrupted
	case restoreUsage:
		return exitUsage
	case restoreLocked:
		return exitLocked
	}
	return exitFailed
}

// restoreJSON is what restore --json prints.
type restoreJSON struct {
	Archive    string        `json:"archive"`
	ArchiveB64 string        `json:"archive_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Dest       string        `json:"dest"`
	DestB64    string        `json:"dest_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Status     restoreStatus `json:"status"`
	Files      int           `json:"files"`
	Dirs       int           `json:"dirs"`
	Symlinks   int           `json:"symlinks"`
	Bytes      int64         `json:"bytes"`
	// AlreadyPresent counts the files DEST held already with the recorded content: kept.
	AlreadyPresent int `json:"already_present"`
	// Removed counts what restoring a before-state removed: paths the undone restore created.
	Removed int `json:"removed"`
	// Undo is the before-state this restore wrote; restoring it with --force undoes this one.
	Undo      *undoPaths       `json:"undo,omitempty"`
	Skipped   []format.Skipped `json:"skipped"`
	Conflicts []string         `json:"conflicts"`
	// ConflictsB64 is, when a conflict's name is not UTF-8, each conflict's name in base64, in
	// the order of Conflicts ("" for a name that is).
	ConflictsB64 []string          `json:"conflicts_b64,omitempty"`
	Refused      []archive.Problem `json:"refused"`
	Damaged      []archive.Problem `json:"damaged"`
	Failed       []archive.Problem `json:"failed"`
	Warnings     []archive.Problem `json:"warnings"` // attributes not set, hard links restored as copies
	Error        string            `json:"error,omitempty"`
	// lockIgnored is set once the plan has found DEST's lock a reader's and said so.
	lockIgnored bool
}

func newRestoreCmd() *cobra.Command {
	cmd := newCommand("restore [flags] ARCHIVE DEST", "extract an archive into a folder, safely", restoreLong, restoreExitCodes)
	var cfg restoreConfig
	flags := cmd.Flags()
	includes := flags.StringArray("include", nil, "restore only entries matching `PATTERN` (gitignore syntax, against the stored name); repeatable")
	flags.BoolVar(&cfg.force, "force", false, "replace files that exist in DEST (never directories), saving them first in a before-state archive")
	flags.StringVar(&cfg.undoDir, "undo-dir", "", "with --force, write the before-state into `DIR` (default: DEST's parent; never inside DEST)")
	flags.BoolVar(&cfg.noUndo, "no-undo", false, "with --force, write no before-state: what is replaced is gone")
	flags.BoolVar(&cfg.json, "json", false, "print the result as JSON to stdout")
	flags.BoolVar(&cfg.jsonLines, "json-lines", false, "print progress and problems to stdout as JSON lines, the result last")
	flags.BoolVarP(&cfg.quiet, "quiet", "q", false, "print nothing when everything was restored and nothing needs a warning")
	flags.StringVar(&cfg.symlinks, "symlinks", "store", "symlinks the backup stored: `MODE` store (create them, never followed) or skip")
	flags.BoolVar(&cfg.owners.NumericOwner, "numeric-owner", false, "as root, restore owners by their numbers, not their names")
	flags.BoolVar(&cfg.owners.NoSameOwner, "no-same-owner", false, "as root, do not restore owners (everything belongs to root)")
	flags.BoolVar(&cfg.owners.SamePermissions, "same-permissions", false, "as root, also restore setuid, setgid and sticky bits, with their owners")
	flags.BoolVar(&cfg.owners.Xattrs, "xattrs", false, "set the extended attributes and ACLs the backup recorded (create --xattrs)")
	identity := addIdentityFlag(flags, identityUsage)
	flags.IntVarP(&cfg.owners.Jobs, "jobs", "j", 0, fmt.Sprintf("restore `N` entries in parallel, 1 to %d; 0 (the default): one per CPU", maxJobs))
	cfg.s3 = addS3Flags(flags)
	cmd.RegisterFlagCompletionFunc("symlinks", cobra.FixedCompletions([]string{"skip", "store"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stderr := cmd.ErrOrStderr()
		// A spool leaves free what the restore writes, which the archive tells; a
		// before-state holds what --force replaces, which it does not: none then.
		cfg.s3.spool = !cfg.force || cfg.noUndo
		if cfg.json && cfg.jsonLines {
			return usageError(stderr, "restore", errors.New("--json and --json-lines cannot be used together: both print to stdout"))
		}
		if len(args) != 2 {
			return usageError(stderr, "restore", argCount("ARCHIVE and DEST", len(args)))
		}
		err := refuseEmpty(flags, []string{"undo-dir", "identity"}, args, "ARCHIVE", "DEST")
		if err == nil {
			err = refuseDash(flags, "undo-dir")
		}
		if err == nil {
			err = refuseDashArg("DEST", args[1])
		}
		if err == nil && (s3store.IsLocation(args[1]) || s3store.Mistyped(args[1])) {
			// Taken for a path, it would be a folder s3: here, and the run would say it
			// restored "to s3://…".
			err = fmt.Errorf("DEST %s: restore writes into a folder on this machine, not a bucket (a folder whose name starts with s3: is given as ./s3:…)", format.QuoteName(args[1]))
		}
		if err == nil {
			cfg.ids, err = identity.load(stderr, "backup restore")
		}
		if err != nil {
			return usageError(stderr, "restore", err)
		}
		if err := cfg.s3.check(args[0]); err != nil {
			return usageError(stderr, "restore", err)
		}
		if j := cfg.owners.Jobs; j < 0 || j > maxJobs {
			return usageError(stderr, "restore", fmt.Errorf("--jobs %d: must be 1 to %d (0: one per CPU)", j, maxJobs))
		}
		if cfg.symlinks != "store" && cfg.symlinks != "skip" {
			return usageError(stderr, "restore", fmt.Errorf("--symlinks %q: must be store or skip", cfg.symlinks))
		}
		if err := checkStdoutNotInput(cmd.OutOrStdout(), args[0], "", identity.paths); err != nil {
			return usageError(stderr, "restore", err)
		}
		cfg.archive = args[0]
		dest, err := kernelPath(args[1])
		if err != nil {
			// A ".." the kernel refuses (missing/.., file/..): a restore that fails, as one
			// into file/d does, not a usage error.
			cfg.unreachable = fmt.Errorf("DEST %s: %w", format.QuoteName(args[1]), cause(err))
			dest = args[1]
		}
		cfg.dest = dest
		if err := cfg.checkDestNotSet(); err != nil {
			return usageError(stderr, "restore", err)
		}
		if cfg.unreachable == nil {
			cfg.stdoutName = stdoutInDest(cmd.OutOrStdout(), cfg.stdoutWhat(), cfg.dest)
		}
		if err := cfg.checkUndoFlags(); err != nil {
			return usageError(stderr, "restore", err)
		}
		if len(*includes) > 0 {
			m, err := skiprules.ParsePatterns(*includes)
			if cerr := checkPatternArgs("--include", *includes); cerr != nil {
				return usageError(stderr, "restore", cerr)
			}
			if err != nil {
				return usageError(stderr, "restore", fmt.Errorf("--include: %w", err))
			}
			cfg.include, cfg.includes = m, *includes
		}
		ctx, stop := interruptible()
		defer stop()
		return restoreArchive(ctx, cfg, cmd.OutOrStdout(), stderr)
	})
	return cmd
}

// restoreArchive restores, prints the result with --json, and returns the exit code its
// status decides.
func restoreArchive(ctx context.Context, cfg restoreConfig, stdout, stderr io.Writer) int {
	defer limitMemory()()
	out := &restoreJSON{Archive: cfg.archive, Dest: cfg.dest}
	if _, ok := stdoutFile(stdout, cfg.stdoutWhat()); ok && cfg.unreachable == nil {
		// Held until the plan, as DEST's path may lead elsewhere once it is locked.
		cfg.held = &heldStdout{w: stdout}
		stdout = cfg.held
	}
	if cfg.jsonLines {
		cfg.events = report.NewEvents(stdout, "restore")
	}
	if lockDest(&cfg, out, stderr) {
		defer cfg.lock.Release()
		if locked := cfg.lock.Path(); cfg.held != nil && locked != "" {
			// The folder the plan reads and Run writes into, not the one DEST's path led to.
			cfg.stdoutName = stdoutInDest(cfg.held.w, cfg.stdoutWhat(), locked)
		}
		restoreInto(ctx, cfg, out, stderr)
		// A DEST the kernel cannot reach (cfg.unreachable) took no lock: cfg.lock is nil.
		if out.lockIgnored {
			// Said on stderr once the plan is made; --json and --json-lines keep it too.
			out.Warnings = append(out.Warnings, archive.Problem{Reason: cfg.lock.Ignored.Error()})
		}
	}
	if cfg.held != nil {
		cfg.held.release() // a restore that ended before its plan: its report (a failure said below)
	}
	if err := endRestoreEvents(cfg.events, out.nonNil()); err != nil {
		outputCut(stderr, "restore", "--json-lines", err)
	}
	if cfg.json {
		if err := writeJSON(stdout, out.nonNil()); err != nil {
			outputCut(stderr, "restore", "--json", err)
		}
	}
	return out.Status.exitCode()
}

// lockDest takes DEST's lock (restore.LockDest) into cfg.lock, before the archive is read:
// a restore that is to be refused is refused at once. It reports false, the refusal in out
// and on stderr, when another restore holds it or it cannot be taken. A DEST the kernel
// cannot reach is not locked: the restore fails on it.
func lockDest(cfg *restoreConfig, out *restoreJSON, stderr io.Writer) bool {
	if cfg.unreachable != nil {
		return true
	}
	lock, err := restore.LockDest(cfg.dest)
	var busy *restore.BusyError
	switch {
	case errors.As(err, &busy):
		out.Status, out.Error = restoreLocked, busy.Error()
	case err != nil:
		out.fail(err)
	default:
		// A lock ignored (lock.Ignored) is said once the plan has found that its holder
		// may write into none of the folders the restore writes through (restoreInto).
		cfg.lock = lock
		return true
	}
	sayf(stderr, "backup restore: %s\n", out.Error)
	return false
}

// restoreInto opens the archive, plans and runs the restore, recording the outcome in out
// and printing it on stderr.
func restoreInto(ctx context.Context, cfg restoreConfig, out *restoreJSON, stderr io.Writer) {
	if cfg.unreachable != nil {
		out.fail(cfg.unreachable)
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	arg := cfg.archive
	ref, err := resolveArchive(ctx, cfg.archive, cfg.s3)
	switch {
	case err != nil && ctx.Err() != nil:
		// A bucket's LATEST read cut short says only "context canceled".
		out.Status, out.Error = restoreInterrupted, "interrupted while reading the backup set; nothing written"
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	case err != nil:
		out.fail(errors.New(setError(cfg.archive, err)))
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	defer ref.close()
	cfg.archive, out.Archive = ref.path, ref.path
	ref.ids = cfg.ids
	r, err := ref.open(ctx)
	if ref.readAgain(ctx, err, &cfg.rereads) {
		cfg.archive = arg
		restoreInto(ctx, cfg, out, stderr)
		return
	}
	if isNoIdentity(err) {
		out.Status, out.Error = restoreUsage, needIdentity(format.QuoteName(cfg.archive)).Error()
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	if err != nil {
		out.fail(cause(err))
		if readFailed(ctx, stderr, "restore", cfg.archive, err) == exitInterrupted {
			out.Status = restoreInterrupted
		}
		return
	}
	defer r.Close()
	err = ref.matchesReceipt(ctx, r, cfg.include == nil)
	if ref.readAgain(ctx, err, &cfg.rereads) {
		// Nothing is written yet: the new target is restored instead.
		cfg.archive = arg
		restoreInto(ctx, cfg, out, stderr)
		return
	}
	if err != nil {
		var wrong notReceipts
		switch {
		case ctx.Err() != nil:
			out.Status, out.Error = restoreInterrupted, "interrupted while checking the archive against its receipt; nothing written"
		case errors.As(err, &wrong):
			// Bit rot fails the check too: the archive file itself can still be restored
			// by name, each file checked against its manifest, once the user has judged it.
			out.fail(fmt.Errorf("%s: %w: it is not the archive the backup wrote; nothing written (backup verify says more; naming the archive file instead of the set restores what its manifest vouches for)", format.QuoteName(cfg.archive), cause(wrong.error)))
		default:
			out.fail(fmt.Errorf("%s: %w: nothing written", format.QuoteName(cfg.archive), cause(err)))
		}
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	plan, err := restore.NewPlan(ctx, r, cfg.dest, cfg.options())
	if err != nil && ctx.Err() != nil {
		out.Status, out.Error = restoreInterrupted, "interrupted while checking the archive and DEST; nothing written"
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	if busy := (*restore.BusyError)(nil); errors.As(err, &busy) {
		// DEST's lock, ignored as a reader's, is held by one who may write into a folder
		// of DEST this restore writes through: another restore, as LockDest would have said.
		out.Status, out.Error = restoreLocked, busy.Error()
		cfg.lock.Ignored = nil // not ignored after all
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	if set := (*restore.SetFolderError)(nil); errors.As(err, &set) {
		// Refused, as a path through a symlink in DEST is: found by the plan in what the
		// archive holds, not by the command line alone (a DEST that is a set is a usage error).
		out.Status, out.Error = restoreRefused, set.Error()+"; nothing written"
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	if err != nil {
		out.fail(err)
		sayf(stderr, "backup restore: %s: %s\n", format.QuoteName(cfg.archive), err.Error())
		return
	}
	if err := cfg.stdoutWritten(plan.Writes); err != nil {
		out.Status, out.Error = restoreUsage, err.Error()
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	if cfg.lock != nil && cfg.lock.Ignored != nil {
		sayf(stderr, "warning: %s: %v\n", format.QuoteName(cfg.dest), cfg.lock.Ignored)
		out.lockIgnored = true
	}
	out.Skipped, out.Conflicts, out.Refused, out.Damaged = plan.Skipped, plan.Conflicts, plan.Refused, plan.Damaged
	runPlan(ctx, cfg, r, plan, out, stderr)
}

func (cfg restoreConfig) options() restore.Options {
	opts := cfg.owners
	opts.Force, opts.NoUndo, opts.SkipSymlinks = cfg.force, cfg.noUndo, cfg.symlinks == "skip"
	opts.SetMarker = backupset.MarkerAt
	opts.Lock = cfg.lock
	if cfg.include != nil {
		opts.Include = func(name string, isDir bool) bool {
			_, matched := cfg.include.Match(name, isDir)
			return matched
		}
	}
	return opts
}

// noMatch says that no entry of r matches the --include patterns, and what they are matched
// against, with a name of r's: a pattern written as a path on disk (/srv/app/f) or without
// the SOURCE's name (f, where the archive stores app/f) is the usual slip.
func noMatch(patterns []string, r *archive.Reader) string {
	quoted := make([]string, len(patterns))
	for i, p := range patterns {
		quoted[i] = format.Quote(p)
	}
	line := "no entry matches --include " + strings.Join(quoted, ", ")
	if len(r.Entries) > 0 {
		line += " (patterns match the names the archive stores, as backup list prints them: " + format.Quote(r.Entries[0].StoredName()) + ")"
	}
	return line
}

// runPlan refuses or carries out the plan, printing what happened on stderr.
func runPlan(ctx context.Context, cfg restoreConfig, r *archive.Reader, plan *restore.Plan, out *restoreJSON, stderr io.Writer) {
	// An unsafe name refuses the whole archive before any entry is selected: that, not an
	// empty selection, is the cause to name.
	switch {
	case !plan.OK():
		out.Status = restoreRefused
		writeRefusal(stderr, r, plan, cfg.force)
		return
	case cfg.include != nil && plan.Selected == 0:
		out.Status, out.Error = restoreRefused, noMatch(cfg.includes, r)
		sayf(stderr, "backup restore: %s\n", out.Error)
		return
	}
	if cfg.force && !cfg.noUndo && len(plan.Replaces())+len(plan.Creates()) > 0 {
		undo, err := writeBeforeState(ctx, cfg, plan, stderr)
		if err != nil {
			out.Status = restoreOutcome(ctx, nil, err)
			out.Error = beforeStateFailed(ctx, err).Error()
			sayf(stderr, "backup restore: %s\n", out.Error)
			return
		}
		out.Undo = undo
		// A second interrupt ends the process at once, DEST maybe half changed: the way
		// back is said all the same.
		done := sayAtForcedExit(func() {
			sayf(stderr, "backup restore: interrupted again: stopped at once, %s may be half changed\n", format.QuoteName(cfg.dest))
			writeUndoLine(stderr, cfg, out)
		})
		defer done()
	}
	opts := report.ProgressOptions{Events: cfg.events, Poll: func() (int64, int64, string) {
		return plan.FilesDone(), plan.BytesWritten(), ""
	}}
	if !cfg.quiet && isTerminal(stderr) {
		opts.Bar = stderr
	}
	var p *report.Progress
	if opts.Bar != nil || opts.Events != nil {
		p = report.StartProgress(opts)
		p.SetTotal(int64(plan.Files-plan.Present), plan.Bytes-plan.PresentBytes)
	}
	res, err := plan.Run(ctx)
	p.Stop()
	if res != nil {
		out.Files, out.Dirs, out.Bytes, out.Damaged, out.Failed = res.Files, res.Dirs, res.Bytes, res.Damaged, res.Failed
		out.Symlinks, out.Warnings, out.AlreadyPresent, out.Removed = res.Symlinks, res.Warnings, res.Present, res.Removed
	}
	out.Status = restoreOutcome(ctx, res, err)
	switch {
	case out.Status == restoreInterrupted:
		out.Error = interruptedAfter(out) // err says only "context canceled"
	case err != nil:
		out.Error = err.Error()
	}
	// -q is quiet when all is well; a warning is something the user must read.
	if out.Status != restoreComplete || !cfg.quiet || len(out.Warnings) > 0 {
		writeRestoreSummary(stderr, cfg, r, out, err)
	}
}

// restoreOutcome is the status of a restore that ran. An interrupt that came once the
// restore had done everything stopped nothing: it is complete, and says so.
func restoreOutcome(ctx context.Context, res *restore.Result, err error) restoreStatus {
	switch {
	case err != nil && ctx.Err() != nil:
		return restoreInterrupted
	case err != nil || len(res.Damaged) > 0:
		return restoreFailed
	case len(res.Failed) > 0:
		return restoreIncomplete
	}
	return restoreComplete
}

// fail records a restore that could not start.
func (o *restoreJSON) fail(err error) {
	o.Status, o.Error = restoreFailed, err.Error()
}

// nonNil makes empty lists print as [] rather than null, and gives the archive, DEST and the
// conflicts whose names are not UTF-8 their base64 twins (archive_b64, dest_b64,
// conflicts_b64). It runs after the restore has printed its lines, which quote the raw
// names; a second call changes nothing.
func (o *restoreJSON) nonNil() *restoreJSON {
	if text, b64 := format.JSONText(o.Archive); b64 != "" {
		o.Archive, o.ArchiveB64 = text, b64
	}
	if text, b64 := format.JSONText(o.Dest); b64 != "" {
		o.Dest, o.DestB64 = text, b64
	}
	for _, l := range []*[]archive.Problem{&o.Refused, &o.Damaged, &o.Failed, &o.Warnings} {
		if *l == nil {
			*l = []archive.Problem{}
		}
	}
	if o.Skipped == nil {
		o.Skipped = []format.Skipped{}
	}
	if o.Conflicts == nil {
		o.Conflicts = []string{}
	}
	if o.ConflictsB64 != nil {
		return o // done before: Conflicts shows the names as text now
	}
	for i, name := range o.Conflicts {
		text, b64 := format.JSONText(name)
		if b64 != "" && o.ConflictsB64 == nil {
			o.Conflicts = slices.Clone(o.Conflicts) // the plan's, which its lines print
			o.ConflictsB64 = make([]string, len(o.Conflicts))
		}
		if b64 != "" {
			o.Conflicts[i], o.ConflictsB64[i] = text, b64
		}
	}
	return o
}

// stdoutWhat names what the restore writes to stdout, or "" when it writes nothing there.
func (cfg restoreConfig) stdoutWhat() string {
	switch {
	case cfg.json:
		return "stdout (--json)"
	case cfg.jsonLines:
		return "stdout (--json-lines)"
	}
	return ""
}

// checkDestNotSet refuses a DEST that is a backup set's folder (backupset.Folder.Marker), as
// create refuses -o into one: a set holds what its runs write, under its lock, and an
// archive's entries written there (a file named LATEST, NAME.zip with its receipt) would
// replace its pointer or become its runs. DEST is looked into, not listed: it may be a large
// tree, and the restore's plan is the first to look at what DEST holds.
func (cfg restoreConfig) checkDestNotSet() error {
	if cfg.unreachable != nil {
		return nil
	}
	// A DEST that is missing is made; one that cannot be opened fails where it is.
	if marker := (backupset.Folder{Dir: cfg.dest}).Marker(context.Background()); marker != "" {
		return fmt.Errorf("DEST %s is a backup set (it holds %s): restore into another folder", format.QuoteName(cfg.dest), marker)
	}
	return nil
}
