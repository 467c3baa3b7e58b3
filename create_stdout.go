package main

// -o -: the archive goes to stdout, for a pipe into another tool (rclone rcat, age, gpg).
// Nothing can be renamed into place or read back, so the receipt, written to --receipt,
// records the archive's size and SHA-256 as they were streamed.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"backup/archive"
	"backup/atomicfile"
	"backup/format"
)

// stdoutArchive is the -o value that sends the archive to stdout.
const stdoutArchive = "-"

// toStdout says whether the archive goes to stdout.
func (cfg *createConfig) toStdout() bool { return cfg.output == stdoutArchive }

// validateStdout refuses what cannot go with an archive on stdout.
func (cfg *createConfig) validateStdout() error {
	switch {
	case !cfg.toStdout():
		return nil
	case cfg.receipt == "":
		return errors.New("-o - writes the archive to stdout: give --receipt PATH for its receipt")
	case cfg.json:
		return errors.New("--json cannot be used with -o -: stdout carries the archive")
	case cfg.jsonLines:
		return errors.New("--json-lines cannot be used with -o -: stdout carries the archive")
	case cfg.verify:
		return errors.New("--verify cannot read back an archive written to stdout; verify it where it lands")
	case cfg.force:
		return errors.New("--force means nothing with -o -: nothing is replaced")
	}
	// The receipt is written once the whole archive has streamed: a folder that is not there
	// must stop the run before, not after, the archive is spent.
	dir := filepath.Dir(cfg.receipt)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("--receipt %s: its folder %s is not there", cfg.receipt, dir)
	}
	return nil
}

// openStdout starts the archive on stdout. A closed pipe must fail the run with a receipt
// that says so, not kill the process with SIGPIPE before it can write one (survivePipes,
// from the start of the run).
func (c *creation) openStdout(ctx context.Context, opts archive.Options) error {
	if f, ok := c.stdout.(*os.File); ok {
		// Redirected into a file inside a SOURCE, the archive must not back itself up.
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			c.cfg.rules.Self = append(c.cfg.rules.Self, info)
		}
	}
	w, err := archive.CreateStream(ctx, c.stdout, os.TempDir(), opts)
	if err != nil {
		return fmt.Errorf("creating archive on stdout: %w", err)
	}
	c.w = w
	return nil
}

// placeStdout writes the receipt of the archive streamed to stdout.
func (c *creation) placeStdout(rc *format.Receipt) error {
	data, err := rc.Marshal()
	if err == nil {
		err = atomicfile.WriteFile(c.out.receipt, data, 0o600)
	}
	// The hooks get the receipt, and it records them, as it does for any run.
	c.written = err == nil
	if err != nil {
		return fmt.Errorf("writing receipt %s: %w", c.out.receipt, cause(err))
	}
	return nil
}
