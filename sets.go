package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
	"backup/pathcheck"
)

const setsLong = `Finds every backup set in LOCATION, a folder or an s3://BUCKET/PREFIX, at any depth, and
prints one line per set, worst first: its health, the age, status and size of the backup
LATEST names, the number of runs, the source, and the set's location. A line on stderr says
why each unhealthy set is so.

A set is healthy when LATEST can be trusted (as backup status checks it); with --max-age,
also when LATEST's backup is complete and started less than DURATION ago. So one cron line
watches a whole fleet.

It reads only listings, LATEST and the receipt LATEST's archive has (on a bucket: one
paginated listing of LOCATION, and two small reads per set), never an archive, and takes no
lock: it can run while backups run, and works on encrypted sets without an identity. A
folder is a set when it holds LATEST or the set's lock file; in a bucket, also when it
holds a run's archive or receipt.`

const setsExitCodes = `0 every set found is healthy, 1 not (or none found, or LOCATION cannot be listed), 2 usage,
130 interrupted.`

func newSetsCmd() *cobra.Command {
	cmd := newCommand("sets [flags] LOCATION", "show the health of every backup set in a folder or bucket", setsLong, setsExitCodes)
	var maxAge durationFlag
	flags := cmd.Flags()
	flags.Var(&maxAge, "max-age", "also require each LATEST to be complete and younger than `DURATION` (e.g. 26h, 7d)")
	asJSON := flags.Bool("json", false, "print the sets as a JSON array")
	metricsFile := flags.String("metrics-file", "", "also write each set's Prometheus metrics to `PATH` (node_exporter textfile collector)")
	s3 := addS3Flags(flags)
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stderr := cmd.ErrOrStderr()
		err := refuseEmpty(flags, []string{"metrics-file"}, args, "LOCATION")
		if err == nil {
			err = refuseDash(flags, "metrics-file")
		}
		if err == nil && len(args) != 1 {
			err = argCount("one LOCATION", len(args))
		}
		if err == nil {
			err = maxAgeErr(flags, maxAge)
		}
		var tree setTree
		if err == nil {
			tree, err = openTree(cmd.Context(), s3, args[0])
		}
		if err != nil {
			return usageError(stderr, "sets", err)
		}
		opts := setsOptions{maxAge: time.Duration(maxAge), json: *asJSON, metricsFile: *metricsFile}
		return showSets(tree, opts, cmd.OutOrStdout(), stderr)
	})
	return cmd
}

type setsOptions struct {
	maxAge      time.Duration
	json        bool
	metricsFile string
}

// setTree is a location that holds sets: a folder, or a prefix of a bucket.
type setTree interface {
	location() string
	// list lists every file below the location, at any depth (see backupset.FindSets);
	// errs are parts of it that could not be read.
	list(ctx context.Context) (files []backupset.Object, errs []error, err error)
	// set is the store of the set in the folder dir below the location; false for a
	// folder that cannot name a set.
	set(dir string) (backupset.Store, bool)
	// byRuns says whether runs alone make a set (see backupset.FindSets).
	byRuns() bool
}

func openTree(ctx context.Context, f *s3Flags, loc string) (setTree, error) {
	if err := f.check(loc); err != nil {
		return nil, err
	}
	if !s3store.IsLocation(loc) {
		return folderTree{reachedOrAsGiven(loc)}, nil
	}
	st, err := f.open(ctx, loc)
	if err != nil {
		return nil, err
	}
	return bucketTree{st.(*s3store.Store)}, nil
}

type folderTree struct{ root string }

func (t folderTree) location() string { return t.root }

func (t folderTree) list(context.Context) ([]backupset.Object, []error, error) {
	files, errs, err := backupset.ListFolderTree(t.root)
	if err != nil {
		err = fmt.Errorf("%s: %w", format.QuoteName(t.root), cause(err))
	}
	return files, errs, err
}

func (t folderTree) set(dir string) (backupset.Store, bool) {
	return backupset.Folder{Dir: filepath.Join(t.root, filepath.FromSlash(dir))}, true
}

func (folderTree) byRuns() bool { return false }

type bucketTree struct{ st *s3store.Store }

func (t bucketTree) location() string { return t.st.Location() }

func (t bucketTree) list(ctx context.Context) ([]backupset.Object, []error, error) {
	files, err := t.st.ListTree(ctx)
	if err != nil {
		// As for a folder: the line names what could not be listed.
		err = fmt.Errorf("%s: %w", format.QuoteName(t.location()), cause(err))
	}
	return files, nil, err
}

func (t bucketTree) set(dir string) (backupset.Store, bool) { return t.st.Sub(dir) }

func (bucketTree) byRuns() bool { return true }

// showSets finds and reads the sets, prints them, and returns the exit code.
func showSets(tree setTree, opts setsOptions, stdout, stderr io.Writer) int {
	ctx, stop := interruptible()
	defer stop()
	files, errs, err := tree.list(ctx)
	if err != nil {
		if ctx.Err() == nil { // an interrupt says nothing of the location: the last file stays
			writeSetsMetrics(opts.metricsFile, nil, false, false, stderr)
		}
		return setsFailed(ctx, stderr, err)
	}
	rows := readSets(ctx, tree, backupset.FindSets(files, tree.byRuns()), opts.maxAge)
	if ctx.Err() != nil {
		return setsFailed(ctx, stderr, ctx.Err())
	}
	if err := checkSetsOutputs(rows, opts.metricsFile, stdout); err != nil {
		return usageError(stderr, "sets", err)
	}
	writeSetsMetrics(opts.metricsFile, rows, true, len(errs) == 0, stderr)
	if opts.json {
		if err := writeJSON(stdout, setsJSON(rows)); err != nil {
			return jsonFailed(stderr, "sets", err)
		}
	} else if err := writeSets(stdout, rows); err != nil {
		tableFailed(stderr, "sets", err)
		setsVerdict(tree.location(), rows, errs, stderr)
		return exitFailed
	}
	return setsVerdict(tree.location(), rows, errs, stderr)
}

// setsFailed reports a location that could not be listed, or an interrupt.
func setsFailed(ctx context.Context, stderr io.Writer, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "backup sets: interrupted")
		return exitInterrupted
	}
	sayf(stderr, "backup sets: %v\n", cause(err))
	return exitFailed
}

// setsVerdict prints why each unhealthy set is so, and what of the location could not be
// read, and returns the exit code.
func setsVerdict(loc string, rows []setRow, errs []error, stderr io.Writer) int {
	code := exitComplete
	for _, err := range errs {
		sayf(stderr, "backup sets: %s\n", err.Error())
		code = exitFailed
	}
	if len(rows) == 0 {
		sayf(stderr, "backup sets: no backup set in %s\n", format.QuoteName(loc))
		return exitFailed
	}
	for _, r := range rows {
		if r.problem != nil {
			sayf(stderr, "backup sets: %s\n", r.reason())
			code = exitFailed
		}
	}
	return code
}

// readSets reads each set found, a few at once (each costs two small reads, and a bucket's
// round trips add up over a fleet), and returns them worst first.
func readSets(ctx context.Context, tree setTree, found []backupset.Found, maxAge time.Duration) []setRow {
	rows := make([]setRow, len(found))
	now := time.Now()
	sem := make(chan struct{}, setsParallel)
	var wg sync.WaitGroup
	for i, f := range found {
		st, ok := tree.set(f.Dir)
		if !ok {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if backupset.UsersLatest(ctx, st, f.Files) {
				return // a release folder's LATEST, say: no set, and left out
			}
			ov := backupset.Overlook(ctx, st, f.Files)
			rows[i] = newSetRow(st.Location(), ov, hasFile(f.Files, backupset.LatestName), now, maxAge)
			_, rows[i].folder = st.(backupset.Folder)
		})
	}
	wg.Wait()
	kept := rows[:0]
	for _, r := range rows {
		if r.loc != "" {
			kept = append(kept, r)
		}
	}
	sortSets(kept)
	return kept
}

// setsParallel is how many sets are read at once.
const setsParallel = 16

func hasFile(files []backupset.Object, name string) bool {
	for _, f := range files {
		if f.Name == name {
			return true
		}
	}
	return false
}

// checkSetsOutputs puts --metrics-file and stdout's file through the one check: neither
// inside a set found, nor one the other.
func checkSetsOutputs(rows []setRow, metricsFile string, stdout io.Writer) error {
	var sets []pathcheck.Arg
	for _, r := range rows {
		if r.folder {
			sets = append(sets, pathcheck.Arg{What: "the backup set " + r.loc, Path: r.loc})
		}
	}
	return checkReportOutputs(sets, metricsFile, stdout)
}
