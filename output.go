package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
)

// outputPaths are where a run writes.
type outputPaths struct {
	archive, receipt string
}

// pickTarget picks where the run's archive and receipt go, and under which names.
func (c *creation) pickTarget(ctx context.Context) (target, error) {
	out, err := c.cfg.pickOutput(ctx, c.started)
	switch st := c.cfg.bucket(); {
	case err != nil:
		return nil, err
	case st != nil:
		return &uploadTarget{out: out, st: st, cache: c.cfg.set.cache}, nil
	case c.cfg.toStdout():
		return &stdoutTarget{receiptFile{out}, c.stdout}, nil
	}
	return &fileTarget{receiptFile: receiptFile{out}, force: c.cfg.force, inSet: c.cfg.set != nil}, nil
}

// pickOutput picks the paths of a run that started at now: in a set in a bucket, names no
// object there holds (remoteOutput); anywhere else as resolveOutput does.
func (cfg *createConfig) pickOutput(ctx context.Context, now time.Time) (outputPaths, error) {
	if st := cfg.bucket(); st != nil {
		return cfg.remoteOutput(ctx, st, now)
	}
	return cfg.resolveOutput(now)
}

// bucket is the bucket's store when the run writes into a set in a bucket.
func (cfg *createConfig) bucket() *s3store.Store {
	if cfg.set == nil {
		return nil
	}
	st, _ := cfg.set.store.(*s3store.Store)
	return st
}

// resolveOutput picks the archive's and the receipt's paths. A default name never replaces
// anything: -2, -3… are added until a free name is found.
func (cfg *createConfig) resolveOutput(now time.Time) (outputPaths, error) {
	var out outputPaths
	var err error
	switch {
	case cfg.toStdout():
		out.archive = stdoutArchive
	case cfg.output != "":
		out.archive, err = cfg.explicitOutput(now)
	default:
		out.archive, err = cfg.defaultOutput(now)
	}
	if err != nil {
		return out, err
	}
	out.receipt = format.ReceiptPath(out.archive)
	if cfg.receipt != "" {
		if err := folderAsTyped("--receipt", cfg.receipt); err != nil {
			return out, err
		}
		out.receipt, err = absPath(cfg.receipt)
	}
	return out, err
}

// folderAsTyped refuses a path typed with a trailing slash that the kernel would not take
// as a folder (missing, or a file): absPath cleans the slash away, and the output would
// then be a file of that name (-o backups/ made the file backups; --force -o a.zip/
// replaced a.zip). A folder with the slash is left to the caller.
func folderAsTyped(flag, path string) error {
	if !strings.HasSuffix(path, "/") {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, cause(err))
	}
	return nil
}

func (cfg *createConfig) explicitOutput(now time.Time) (string, error) {
	if err := folderAsTyped("output", cfg.output); err != nil {
		return "", err
	}
	path, err := absPath(cfg.output)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		return freeName(path, cfg.series(), now), nil
	case err == nil && !cfg.force:
		return "", &outputExists{path} // a before-state's name can be taken since it was chosen
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("output %s: %w", path, cause(err))
	}
	return path, nil
}

func (cfg *createConfig) defaultOutput(now time.Time) (string, error) {
	dir, err := absPath(cfg.outputDir)
	if err != nil {
		return "", err
	}
	if !cfg.dryRun {
		if err := mkdirFolder(dir); err != nil {
			return "", fmt.Errorf("output folder %s: %w", dir, cause(err))
		}
	}
	return freeName(dir, cfg.series(), now), nil
}

// series is what the run's default name begins with: the first SOURCE's name, or for an
// encrypted archive nothing (backupset.Sealed), which would tell whoever sees the file what
// it holds.
func (cfg *createConfig) series() string {
	if cfg.recipients != nil {
		return backupset.Sealed
	}
	return cfg.sources[0].Name
}

// maxSeriesName is how many bytes of a SOURCE's name a default archive name can hold: with
// the time, a "-NN" of a busy second and ".zip.receipt.json", the receipt's temp name
// (".NAME.tmp-" and ten digits) stays within NAME_MAX (255). The name is not cut to fit: a
// set matches its runs to their source by the whole name (backupset.SourceOf).
const maxSeriesName = 255 - len(".-20261206T105648Z-99.zip.receipt.json.tmp-1234567890")

// checkSeriesName refuses, before anything is done, a run whose archive would get a default
// name (no -o, or -o naming a folder; not encrypted, whose names hold no source) that
// cannot fit: it failed at the write of the archive, or of its receipt after the archive
// was written. A set in a bucket has no such limit (its keys are not file names).
func (cfg *createConfig) checkSeriesName() error {
	name := cfg.series()
	if len(name) <= maxSeriesName || cfg.toStdout() || cfg.bucket() != nil {
		return nil
	}
	if cfg.output != "" {
		if info, err := os.Stat(cfg.output); err != nil || !info.IsDir() {
			return nil // -o FILE names the archive itself
		}
	}
	return fmt.Errorf("source %q: its name is %d bytes, too long for a default archive name (NAME-<UTC time>.zip, at most %d bytes of NAME); give -o FILE", cfg.sources[0].Path, len(name), maxSeriesName)
}

// freeName returns dir/<name>-<UTC time>.zip (encrypted: dir/<UTC time>.zip.age), or with
// -2, -3… past every run of that second
// whose archive or receipt is in dir (backupset.FreeName, the one picker). A folder that
// cannot be listed (write-only, or one entry's lstat fails) gives the first name free by
// lookup (backupset.FirstFree): never a used one, which would fail the run at its end.
func freeName(dir, name string, now time.Time) string {
	st := backupset.Folder{Dir: dir}
	file, err := backupset.FreeName(context.Background(), st, name, now)
	if err != nil {
		file = backupset.FirstFree(context.Background(), st, name, now)
	}
	return filepath.Join(dir, file)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// cause strips the path from an *fs.PathError whose path the message names already.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
