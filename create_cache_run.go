package main

// How a run into a set in a bucket uses its local copy (create_cache.go): the flags, the
// copy to reuse from, and keeping the new one once LATEST names its archive.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"backup/backupset"
	"backup/format"
)

// cacheFlags are --cache-dir and --no-cache.
type cacheFlags struct {
	dir string
	off bool
}

// validateCache picks the cache of a run into a set in a bucket. The flags mean nothing
// elsewhere (a folder set reuses from LATEST's archive in place), and are refused there.
func (cfg *createConfig) validateCache(flags *pflag.FlagSet, f cacheFlags, s3 *s3Flags) error {
	given := flags.Changed("cache-dir") || flags.Changed("no-cache")
	switch {
	case given && cfg.bucket() == nil:
		return errors.New("--cache-dir and --no-cache need a backup set in a bucket (--output-dir s3://BUCKET/PREFIX)")
	case f.dir != "" && f.off:
		return errors.New("--cache-dir and --no-cache: choose one")
	case cfg.bucket() == nil || f.off:
		return nil
	case cfg.recipients != nil && !cfg.recipients.OpenableBy(cfg.identities):
		// A copy of an archive no key of the run's opens could never be read for reuse: a
		// host that backs up without keys keeps none, and says so in the one line of a
		// full run. So does a run whose keys open LATEST's archive but not the one it
		// writes (a new --recipient): the line names the one it cannot open.
		cfg.set.noCache = errors.New("the backups are encrypted, and no --identity of the run opens the archive it writes (its --recipient): no local copy is kept to copy unchanged files from")
		return nil
	}
	root, err := defaultCacheRoot()
	if f.dir != "" {
		root, err = absPath(f.dir)
	}
	if err != nil {
		// No home to keep a cache in (a service without $HOME): every run reads every
		// file, and says why.
		cfg.set.noCache = fmt.Errorf("no cache folder (%v); give --cache-dir", err)
		return nil
	}
	cfg.set.cache = newSetCache(root, s3.endpoint, cfg.set.dir)
	return nil
}

// prepareCache creates the cache folder of a run into a set in a bucket before the walk, so
// that the walk can leave it out of a SOURCE that holds it. A cache that cannot be made
// costs the reuse, said in one line, never the backup.
func (c *creation) prepareCache() {
	set := c.cfg.set
	if set == nil || set.cache == nil || c.cfg.dryRun {
		return
	}
	if err := set.cache.prepare(); err != nil {
		set.noCache = fmt.Errorf("cache folder %s: %w", set.cache.root, cause(err))
		set.cache = nil
	}
}

// cachedReference is the local copy of the archive LATEST names in a set in a bucket, which
// the engine then checks against LATEST's receipt (c.refReceipt) before it copies anything;
// "" for a full run, said in one line: no cache, no copy, or a copy of another archive.
func (c *creation) cachedReference(ctx context.Context, stderr io.Writer) string {
	set := c.cfg.set
	if set.cache == nil {
		if set.noCache != nil {
			c.fullRun(stderr, set.noCache)
		}
		return ""
	}
	latest, err := backupset.Latest(ctx, set.store)
	switch {
	case errors.Is(err, backupset.ErrNoBackup):
		return ""
	case err != nil:
		c.fullRun(stderr, err)
		return ""
	}
	path, err := set.cache.find(latest.Name)
	if err != nil {
		c.fullRun(stderr, err)
		return ""
	}
	c.refReceipt = latest.Receipt
	return path
}

// keepCopy puts the local copy of the archive in place, now that LATEST names it; a copy
// that cannot be kept is one line, and the next run reads every file.
func (c *creation) keepCopy(rc *format.Receipt, stderr io.Writer) {
	t, ok := c.target.(*uploadTarget)
	if !ok || t.copy == nil {
		return
	}
	w := t.copy
	t.copy = nil
	want, _ := rc.Summary()
	if err := w.keep(t.name(), want); err != nil && !c.cfg.quiet {
		sayf(stderr, "backup: could not keep a local copy of the archive in %s (the next run reads every file): %v\n", w.c.dir, cause(err))
	}
}

// dropCopy removes the local copy of an archive that LATEST does not name: the copy LATEST's
// archive had stays the one to reuse from.
func (c *creation) dropCopy() {
	if t, ok := c.target.(*uploadTarget); ok && t.copy != nil {
		t.copy.drop(nil)
		t.copy = nil
	}
}
