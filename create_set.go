package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"backup/backupset"
	"backup/backupset/s3store"
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
	if err := backupset.CheckSourceName(cfg.sources[0].Name); err != nil {
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
