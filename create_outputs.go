package main

import (
	"fmt"
	"os"
	"path/filepath"

	"backup/backupset"
)

// namedPath is a path the run reads or writes, with how the user named it.
type namedPath struct {
	what, path string
}

// checkOutputs refuses a run whose archive or receipt would be written over the other, over
// a SOURCE or over an --exclude-from file, by the same name or through a symlink or a hard
// link: once, --receipt x.zip replaced the archive x.zip with its receipt and the run said
// complete. An output inside a SOURCE folder is fine: the walk leaves it out.
func (cfg *createConfig) checkOutputs(excludeFrom []string) error {
	if cfg.receipt != "" {
		if info, err := os.Stat(cfg.receipt); err == nil && info.IsDir() {
			return fmt.Errorf("--receipt %s is a folder", cfg.receipt)
		}
	}
	var inputs, outputs []namedPath
	for _, s := range cfg.sources {
		inputs = append(inputs, namedPath{"SOURCE " + s.path, s.path})
	}
	for _, name := range excludeFrom {
		inputs = append(inputs, namedPath{"--exclude-from " + name, name})
	}
	if archive, ok := cfg.explicitArchive(); ok {
		outputs = append(outputs, namedPath{"the archive (-o " + cfg.output + ")", archive})
		if cfg.receipt == "" {
			receipt := backupset.ReceiptPath(archive)
			outputs = append(outputs, namedPath{"the receipt " + receipt, receipt})
		}
	}
	if cfg.receipt != "" {
		outputs = append(outputs, namedPath{"--receipt " + cfg.receipt, cfg.receipt})
	}
	for i, out := range outputs {
		for _, other := range append(inputs, outputs[:i]...) {
			if samePath(out.path, other.path) {
				return fmt.Errorf("%s is also %s", out.what, other.what)
			}
		}
	}
	return nil
}

// explicitArchive is the archive's path when -o names it; a folder given as -o gets a new
// default name inside, which cannot be any input.
func (cfg *createConfig) explicitArchive() (string, bool) {
	if cfg.output == "" || cfg.toStdout() {
		return "", false
	}
	if info, err := os.Stat(cfg.output); err == nil && info.IsDir() {
		return "", false
	}
	return cfg.output, true
}

// samePath reports whether a and b name one file: the same path once made absolute with
// the symlinks of its folder resolved (for files that do not exist yet), or the same file
// by device and inode (symlinks and hard links to it).
func samePath(a, b string) bool {
	if resolveDir(a) == resolveDir(b) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func resolveDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}
