package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"backup/backupset"
)

const pruneUsage = `backup prune [flags] DIR

Deletes the backups of the set in DIR that no --keep-* rule keeps, each archive together with
its receipt, and prints what was kept and why. The rules count complete backups and combine
as in restic's forget: a backup kept by any rule is kept. Hours, days, ISO weeks and months
are calendar buckets in local time (TZ), by the receipt's started_at.

Never deleted: the LATEST target; the newest complete backup; a backup whose receipt cannot
be read ("unknown, kept"); files without this tool's default archive names; backups of
another source than LATEST's. Backups that are not complete are kept when newer than the
newest complete one and deleted (superseded) when older. A damaged or missing LATEST stops
prune before it deletes anything. Prune holds the set's lock while it works.

Exit codes: 0 done, 1 refused or failed, 2 usage, 4 the set is locked by another run.`

// pruneJSON is what prune --json prints.
type pruneJSON struct {
	Dir     string         `json:"dir"`
	DryRun  bool           `json:"dry_run,omitempty"`
	Deleted int            `json:"deleted"`
	Kept    int            `json:"kept"`
	Runs    []pruneRunJSON `json:"runs"`
}

type pruneRunJSON struct {
	Name      string          `json:"name"`
	State     backupset.State `json:"state"`
	StartedAt time.Time       `json:"started_at"`
	Keep      bool            `json:"keep"`
	Reasons   []string        `json:"reasons"`
}

func runPrune(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("prune", pflag.ContinueOnError)
	keep := addKeepFlags(fs)
	dryRun := fs.BoolP("dry-run", "n", false, "print what would be deleted; delete nothing")
	asJSON := fs.Bool("json", false, "print the decisions as JSON")
	var wait durationFlag
	fs.Var(&wait, "wait", "wait up to `DURATION` for a running backup of the set instead of exiting 4")
	if code, done := parseFlags(fs, args, pruneUsage, stdout, stderr); done {
		return code
	}
	policy, err := keep.validated()
	switch {
	case err != nil:
		return usageError(stderr, "prune", err)
	case !keep.given():
		return usageError(stderr, "prune", fmt.Errorf("give at least one rule: --%s", strings.Join(keepNames, ", --")))
	case fs.NArg() != 1:
		return usageError(stderr, "prune", fmt.Errorf("want one DIR, got %d arguments", fs.NArg()))
	}
	if err := refuseEmpty(fs, nil, "DIR"); err != nil {
		return usageError(stderr, "prune", err)
	}
	dir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return usageError(stderr, "prune", err)
	}
	return prune(dir, policy, time.Duration(wait), *dryRun, *asJSON, stdout, stderr)
}

func prune(dir string, policy backupset.Policy, wait time.Duration, dryRun, asJSON bool, stdout, stderr io.Writer) int {
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(stderr, "backup prune: %v\n", err)
		return exitFailed
	}
	ctx, stop := interruptible()
	defer stop()
	lock, err := backupset.Acquire(ctx, dir, wait)
	var locked *backupset.LockedError
	switch {
	case errors.As(err, &locked):
		fmt.Fprintf(stderr, "backup prune: %s: %v\n", dir, err)
		return exitLocked
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "backup prune: %v\n", err)
		return exitFailed
	}
	defer lock.Release()
	plan, err := lock.Prune(policy, dryRun)
	if asJSON {
		writePlanJSON(stdout, dir, plan, dryRun)
	} else {
		writePlan(stdout, plan, dryRun)
	}
	if err != nil {
		fmt.Fprintf(stderr, "backup prune: %s\n", setError(dir, err))
		return exitFailed
	}
	return exitComplete
}

// writePlan prints one line per run, oldest first: keep or delete, and why.
func writePlan(w io.Writer, plan []backupset.Decision, dryRun bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	deleted := 0
	for _, d := range plan {
		verb := "keep"
		if !d.Keep {
			deleted++
			verb = "delete"
			if dryRun {
				verb = "would delete"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", verb, d.Started.Local().Format(time.RFC3339), d.State, d.Name, strings.Join(d.Reasons, ", "))
	}
	tw.Flush()
	if dryRun {
		fmt.Fprintf(w, "dry run: would delete %d, keep %d\n", deleted, len(plan)-deleted)
		return
	}
	fmt.Fprintf(w, "deleted %d, kept %d\n", deleted, len(plan)-deleted)
}

func writePlanJSON(w io.Writer, dir string, plan []backupset.Decision, dryRun bool) {
	out := pruneJSON{Dir: dir, DryRun: dryRun, Runs: []pruneRunJSON{}}
	for _, d := range plan {
		if d.Keep {
			out.Kept++
		} else {
			out.Deleted++
		}
		out.Runs = append(out.Runs, pruneRunJSON{Name: d.Name, State: d.State, StartedAt: d.Started, Keep: d.Keep, Reasons: d.Reasons})
	}
	data, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintf(w, "%s\n", data)
}
