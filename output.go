package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"backup/backupset"
	"backup/format"
)

// outputPaths are where a run writes.
type outputPaths struct {
	archive, receipt string
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
		out.receipt, err = filepath.Abs(cfg.receipt)
	}
	return out, err
}

func (cfg *createConfig) explicitOutput(now time.Time) (string, error) {
	path, err := filepath.Abs(cfg.output)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		return freeName(path, cfg.sources[0].name, now), nil
	case err == nil && !cfg.force:
		return "", fmt.Errorf("output %s exists (use --force to replace it)", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("output %s: %w", path, cause(err))
	}
	return path, nil
}

func (cfg *createConfig) defaultOutput(now time.Time) (string, error) {
	dir, err := filepath.Abs(cfg.outputDir)
	if err != nil {
		return "", err
	}
	if !cfg.dryRun {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("output folder %s: %w", dir, cause(err))
		}
	}
	return freeName(dir, cfg.sources[0].name, now), nil
}

// freeName returns dir/<name>-<UTC time>.zip, or with -2, -3… past every run of that second
// whose archive or receipt is in dir.
func freeName(dir, name string, now time.Time) string {
	// A folder that cannot be listed gives no names; the loop still finds a free one, and
	// writing into that folder will say what is wrong with it.
	var names []string
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	for n := backupset.NextRun(names, name, now); ; n++ {
		path := filepath.Join(dir, backupset.ArchiveName(name, now, n))
		if !exists(path) && !exists(format.ReceiptPath(path)) {
			return path
		}
	}
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
