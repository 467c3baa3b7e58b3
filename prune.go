package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"backup/backupset"
	"backup/format"
	"backup/hooks"
	"backup/pathcheck"
	"backup/report"
)

const pruneLong = `Deletes the backups of the set in DIR that no --keep-* rule keeps, each archive together with
its receipt, and prints what was kept and why. The rules count complete backups and combine
as in restic's forget: a backup kept by any rule is kept. Hours, days, ISO weeks and months
are calendar buckets in local time (TZ), by the receipt's started_at.

Never deleted: the LATEST target; the newest complete backup; a backup whose receipt cannot
be read ("unknown (CAUSE), kept"); files without this tool's default archive names; backups of
another source than LATEST's; a run dated more than a minute in the future (its clock was
wrong), which no rule counts. Backups that are not complete are kept when newer than the
newest complete one and deleted (superseded) when older. A damaged or missing LATEST stops
prune before it deletes anything. Prune holds the set's lock while it works.

With --attic DIR, the backups prune would delete are moved into DIR instead, each archive
with its receipt: by rename on the same file system, else copied, synced, read back and
compared with the receipt's SHA-256, and only then deleted from the set. An archive and its
receipt move as a unit: when one cannot follow the other, the run stays whole in the set and
prune stops. A file already in DIR is never replaced. Retention then frees space only if DIR is cleaned by other means.`

const pruneExitCodes = `0 done, 1 refused or failed, 2 usage, 4 the set is locked by another run,
130 interrupted (what was deleted or moved before is listed; the rest stays).`

// pruneJSON is what prune --json prints.
type pruneJSON struct {
	Dir     string `json:"dir"`
	DirB64  string `json:"dir_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	DryRun  bool   `json:"dry_run"`
	Deleted int    `json:"deleted"`
	// Attic and Moved say where the runs not kept went, with --attic; Deleted is then 0.
	Attic    string         `json:"attic,omitempty"`
	AtticB64 string         `json:"attic_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Moved    int            `json:"moved,omitempty"`
	Kept     int            `json:"kept"`
	Runs     []pruneRunJSON `json:"runs"`
	// Error says why prune stopped, was refused or did not run (exit 1, 4 or 130); the
	// runs are those decided before it stopped.
	Error string `json:"error,omitempty"`
}

type pruneRunJSON struct {
	Name      string          `json:"name"`
	NameB64   string          `json:"name_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	State     backupset.State `json:"state"`
	StartedAt time.Time       `json:"started_at"`
	Keep      bool            `json:"keep"`
	Reasons   []string        `json:"reasons"`
	// ReceiptLeft: the archive was deleted, its receipt not (the prune stopped there).
	ReceiptLeft bool `json:"receipt_left,omitempty"`
}

// pruneConfig is the prune command's flags after validation.
type pruneConfig struct {
	store        backupset.Store
	policy       backupset.Policy
	wait         time.Duration
	dryRun, json bool
	jsonLines    bool
	attic        *backupset.Attic
	atticArg     string // --attic as given, checked again after the before hooks
	hooks        *hooks.Commands
}

func newPruneCmd() *cobra.Command {
	cmd := newCommand("prune [flags] DIR", "delete a backup set's old backups by --keep-* rules", pruneLong, pruneExitCodes)
	flags := cmd.Flags()
	keep := addKeepFlags(flags)
	dryRun := flags.BoolP("dry-run", "n", false, "print what would be deleted; delete nothing, run no hook")
	asJSON := flags.Bool("json", false, "print the decisions as JSON")
	jsonLines := flags.Bool("json-lines", false, "print each decision and then the result to stdout, one JSON object a line")
	var wait durationFlag
	flags.Var(&wait, "wait", "wait up to `DURATION` for a running backup of the set instead of exiting 4")
	attic := flags.String("attic", "", "move the backups not kept into the folder `DIR` instead of deleting them")
	hookCmds := addHookFlags(flags)
	s3 := addS3Flags(flags)
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		cfg := pruneConfig{wait: time.Duration(wait), dryRun: *dryRun, json: *asJSON, jsonLines: *jsonLines, hooks: runHooks(hookCmds, *dryRun)}
		var err error
		cfg.policy, err = keep.validated()
		switch {
		case err != nil:
		case cfg.json && cfg.jsonLines:
			err = fmt.Errorf("--json and --json-lines cannot be used together: both print to stdout")
		case !keep.given():
			err = fmt.Errorf("give at least one rule: --%s", strings.Join(keepNames, ", --"))
		case len(args) != 1:
			err = argCount("one DIR", len(args))
		default:
			err = refuseEmpty(flags, []string{"attic"}, args, "DIR")
			if err == nil {
				err = refuseDash(flags, "attic")
			}
		}
		if err == nil {
			cfg.store, err = s3.open(cmd.Context(), args[0])
		}
		if err == nil {
			err = checkStatusOutputs(cfg.store, "", cmd.OutOrStdout())
		}
		if err == nil && flags.Changed("attic") {
			cfg.atticArg = *attic
			cfg.attic, err = atticFolder(*attic, cfg.store)
		}
		if err != nil {
			return usageError(cmd.ErrOrStderr(), "prune", err)
		}
		return prune(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	return cmd
}

// prune runs the --exec-before hooks, prunes, and runs the --exec-after hooks whatever the
// outcome (prune writes no receipt: a failed after hook is a line on stderr). The hooks get
// what stopped the prune as BACKUP_ERROR, the cause --json prints, as create's get the
// receipt's.
func prune(cfg pruneConfig, stdout, stderr io.Writer) int {
	code, err := pruneSet(cfg, stdout, stderr)
	if len(cfg.hooks.After) > 0 {
		env := hooks.Env{Command: "prune", ExitCode: code, Status: outcome(code), Set: cfg.store.Location()}
		if err != nil {
			env.Error = err.Error()
		}
		cfg.hooks.RunAfter("backup prune", env, stderr)
	}
	return code
}

// pruneSet prunes and prints the outcome: --json and --json-lines whatever ended the prune
// (with the cause in "error"), else the plan, unless prune was refused before it planned
// (a damaged LATEST): the one line on stderr then says what happened. It returns the exit
// code and what stopped the prune.
func pruneSet(cfg pruneConfig, stdout, stderr io.Writer) (int, error) {
	plan, code, err := runPrune(cfg, stderr)
	switch {
	case cfg.json || cfg.jsonLines:
		out := cfg.newPruneJSON(plan)
		if err != nil {
			out.Error = err.Error()
		}
		if cfg.jsonLines {
			if werr := writePruneEvents(stdout, out); werr != nil {
				outputCut(stderr, "prune", "--json-lines", werr)
			}
		} else if werr := writeJSON(stdout, out); werr != nil {
			outputCut(stderr, "prune", "--json", werr)
		}
	case plan != nil || err == nil:
		writePlan(stdout, plan, cfg.dryRun, cfg.attic, err != nil)
	}
	return code, err
}

// runPrune takes the set's lock, runs the --exec-before hooks and prunes. It returns the
// decisions carried out, the exit code, and what stopped the prune, which it has printed.
func runPrune(cfg pruneConfig, stderr io.Writer) ([]backupset.Decision, int, error) {
	ctx, stop := interruptible()
	defer stop()
	if f, ok := cfg.store.(backupset.Folder); ok {
		// A folder's lock file would create the folder: a mistyped DIR must not.
		if _, err := os.Stat(f.Dir); err != nil {
			sayf(stderr, "backup prune: %v\n", err)
			return nil, exitFailed, err
		}
		if len(cfg.hooks.Before) == 0 && notASet(ctx, f) {
			return nil, exitComplete, nil
		}
	}
	lock, code, err := takeLock(ctx, cfg.store, cfg.wait, "backup prune", stderr, acquireFor(cfg.dryRun))
	if lock == nil {
		return nil, code, err
	}
	defer releaseSet(lock, "backup prune", stderr)
	if _, err := cfg.hooks.RunBefore(ctx, hooks.Env{Command: "prune", Set: cfg.store.Location()}, stderr); err != nil {
		sayf(stderr, "backup prune: failed: %v\n", err)
		if ctx.Err() != nil {
			return nil, exitInterrupted, err
		}
		return nil, exitFailed, err
	}
	if cfg.attic != nil {
		// A hook may mount what --attic names: the set, or another set, may be there now.
		if _, err := atticFolder(cfg.atticArg, cfg.store); err != nil {
			sayf(stderr, "backup prune: failed: %v\n", err)
			return nil, exitFailed, err
		}
	}
	plan, err := lock.PruneInto(ctx, cfg.policy, cfg.dryRun, cfg.attic)
	switch {
	case err != nil && ctx.Err() != nil:
		// The plan says what left the set before the interrupt; the error it cut short
		// would only say "context canceled".
		fmt.Fprintln(stderr, "backup prune: interrupted")
		return plan, exitInterrupted, errInterrupted
	case err != nil:
		err = errors.New(setError(cfg.store.Location(), err))
		sayf(stderr, "backup prune: %v\n", err)
		return plan, exitFailed, err
	}
	return plan, exitComplete, nil
}

// writePlan prints one line per run, oldest first: keep or delete, and why. A prune that
// stopped (on an error, which its caller prints) lists the decisions it carried out and
// says how many runs left the set before it stopped: the rest of the set is as it was.
func writePlan(w io.Writer, plan []backupset.Decision, dryRun bool, attic *backupset.Attic, stopped bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	deleted := 0
	del := "delete"
	if attic != nil {
		del = "move to attic"
	}
	for _, d := range plan {
		verb := "keep"
		if !d.Keep {
			deleted++
			verb = del
			if dryRun {
				verb = "would " + del
			}
		}
		reasons := format.EscapeText(strings.Join(d.Reasons, ", "))
		if d.ReceiptLeft {
			reasons += "; its receipt left"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", verb, d.Started.Local().Format(time.RFC3339), d.State, format.QuoteName(d.Name), reasons)
	}
	tw.Flush()
	done := "deleted"
	if attic != nil {
		del, done = "move to "+format.QuoteName(attic.Dir), "moved to "+format.QuoteName(attic.Dir)
	}
	switch {
	case dryRun:
		fmt.Fprintf(w, "dry run: would %s %d, keep %d\n", del, deleted, len(plan)-deleted)
	case stopped:
		fmt.Fprintf(w, "%s %d, then stopped\n", done, deleted)
	default:
		fmt.Fprintf(w, "%s %d, kept %d\n", done, deleted, len(plan)-deleted)
	}
}

func (cfg pruneConfig) newPruneJSON(plan []backupset.Decision) pruneJSON {
	out := pruneJSON{DryRun: cfg.dryRun, Runs: []pruneRunJSON{}}
	out.Dir, out.DirB64 = format.JSONText(cfg.store.Location())
	if cfg.attic != nil {
		out.Attic, out.AtticB64 = format.JSONText(cfg.attic.Dir)
	}
	for _, d := range plan {
		switch {
		case d.Keep:
			out.Kept++
		case cfg.attic != nil:
			out.Moved++
		default:
			out.Deleted++
		}
		r := pruneRunJSON{State: d.State, StartedAt: d.Started, Keep: d.Keep, Reasons: d.Reasons, ReceiptLeft: d.ReceiptLeft}
		r.Name, r.NameB64 = format.JSONText(d.Name)
		out.Runs = append(out.Runs, r)
	}
	return out
}

// writePruneEvents prints --json-lines: a "decision" line per backup, oldest first, then
// the result as --json prints it.
func writePruneEvents(stdout io.Writer, out pruneJSON) error {
	e := report.NewEvents(stdout, "prune")
	for _, r := range out.Runs {
		e.Emit("decision", r)
	}
	return e.Result(out)
}

// notASet says whether the folder holds nothing of a set: no lock file (which every run
// makes first), no LATEST and no run. Prune and activate have nothing to do there, and take
// no lock: the lock file they would leave makes the folder a set to backup sets (a
// mistyped DIR, the parent of the sets, would fail the fleet check for ever). With
// --exec-before prune locks as ever: a hook may mount the set.
func notASet(ctx context.Context, f backupset.Folder) bool {
	files, err := f.List(ctx)
	return err == nil && backupset.SetMarker(files, true) == ""
}

// atticFolder checks --attic: an existing folder, not the set's own (whose archives it would
// then only rename in place), nor another set.
func atticFolder(arg string, st backupset.Store) (*backupset.Attic, error) {
	dir, err := existingFolder("--attic", arg)
	if err != nil {
		return nil, err
	}
	if f, ok := st.(backupset.Folder); ok {
		// A symlink to the set, set/. or a bind mount of it is the set too.
		pc := pathcheck.Check{Sealed: []pathcheck.Arg{{What: "the backup set " + f.Dir, Path: f.Dir}},
			Outputs: []pathcheck.Arg{{What: "--attic " + arg, Path: dir}}}
		if err := pc.Err(); err != nil {
			return nil, err
		}
	}
	// Its runs, moved there, do not make it a set: the lock file or a LATEST naming a run does. One that
	// cannot be listed fails where the runs are moved into it.
	if marker := (backupset.Folder{Dir: dir}).Marker(context.Background()); marker != "" {
		return nil, fmt.Errorf("--attic %s: is a backup set (it holds %s): the runs moved there would be that set's, and its prune would delete them", arg, marker)
	}
	return &backupset.Attic{Dir: dir}, nil
}
