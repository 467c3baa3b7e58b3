package main

// -o -: the archive goes to stdout, for a pipe into another tool (rclone rcat, age, gpg).
// Nothing can be renamed into place or read back, so the receipt, written to --receipt,
// records the archive's size and SHA-256 as they were streamed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"backup/engine"
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
	case isNullDevice(os.Stdout):
		return errors.New("-o - writes the archive to stdout, which is /dev/null (or was closed, which Go opens there): the archive would be lost")
	}
	// The receipt is written once the whole archive has streamed: a folder that is not there
	// must stop the run before, not after, the archive is spent.
	receipt, err := kernelPath(cfg.receipt) // where it will be written: lnk/.. as the kernel takes it
	if err != nil {
		return fmt.Errorf("--receipt %s: %w", cfg.receipt, err)
	}
	dir := filepath.Dir(receipt)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("--receipt %s: its folder %s is not there", cfg.receipt, dir)
	}
	return nil
}

// stdoutTarget streams the archive to stdout and writes its receipt to --receipt once the
// whole archive has gone. A closed pipe must fail the run with a receipt that says so, not
// kill the process with SIGPIPE before it can write one (survivePipes, from the start of
// the run).
type stdoutTarget struct {
	receiptFile
	stdout io.Writer
}

func (t *stdoutTarget) open(context.Context) (engine.Output, error) {
	return engine.Output{Path: t.out.archive, Stream: t.stdout}, nil
}

// place writes the receipt of the archive streamed to stdout.
func (t *stdoutTarget) place(_ context.Context, _ *engine.Result, rc *format.Receipt) error {
	if err := t.write(rc); err != nil {
		return fmt.Errorf("writing receipt %s: %w", t.out.receipt, cause(err))
	}
	return nil
}

// isNullDevice says whether f is /dev/null (character device 1:3). Go's runtime opens
// /dev/null on a standard descriptor that was closed before main runs, so a run with stdout
// closed (>&-) saw every write succeed, and called an archive that went nowhere complete.
func isNullDevice(f *os.File) bool {
	if f == nil {
		return false
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 3
}
