package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"backup/archive"
	"backup/backupset"
	"backup/report"
)

const verifyUsage = `backup verify [--receipt PATH] [--json] [-q] ARCHIVE

ARCHIVE may be a backup set's folder: its LATEST backup is verified (a damaged or missing
LATEST is an error; no other archive is picked).

Reads ARCHIVE end to end without extracting anything: the zip structure, every local
header against the central directory, every entry's CRC-32, every file's SHA-256 and size
against the manifest, the entries against the manifest's list, and whether every name is
safe to restore. When a receipt is found
(--receipt, else ARCHIVE.receipt.json when it exists) the archive's size and SHA-256 must
match it. An archive another tool made (no manifest) is checked by CRC-32 alone.

Exit codes: 0 verified, 1 anything wrong (each problem on its own line) or a receipt that
cannot be read, 2 usage, 130 interrupted.`

type verifyConfig struct {
	receipt     string
	json, quiet bool
	archive     string
}

// verifyOutput is what --json prints.
type verifyOutput struct {
	Archive string  `json:"archive"`
	Receipt *string `json:"receipt"`
	OK      bool    `json:"ok"`
	*archive.VerifyResult
}

func runVerify(args []string, stdout, stderr io.Writer) int {
	var cfg verifyConfig
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	fs.StringVar(&cfg.receipt, "receipt", "", "receipt to check the archive against (default: ARCHIVE.receipt.json when it exists)")
	fs.BoolVar(&cfg.json, "json", false, "print the result as JSON to stdout")
	fs.BoolVarP(&cfg.quiet, "quiet", "q", false, "print nothing when the archive verifies")
	if code, done := parseFlags(fs, args, verifyUsage, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, "verify", fmt.Errorf("want one ARCHIVE, got %d arguments", fs.NArg()))
	}
	if err := refuseEmpty(fs, []string{"receipt"}, "ARCHIVE"); err != nil {
		return usageError(stderr, "verify", err)
	}
	cfg.archive = fs.Arg(0)
	ctx, stop := interruptible()
	defer stop()
	return verifyArchive(ctx, cfg, stdout, stderr)
}

func verifyArchive(ctx context.Context, cfg verifyConfig, stdout, stderr io.Writer) int {
	path, err := resolveArchive(cfg.archive)
	if err != nil {
		if cfg.json {
			writeJSON(stdout, verifyOutput{Archive: cfg.archive, VerifyResult: &archive.VerifyResult{
				Problems: []archive.Problem{{Reason: setError(cfg.archive, err)}}}})
		}
		fmt.Fprintf(stderr, "backup verify: %s\n", setError(cfg.archive, err))
		return exitFailed
	}
	cfg.archive = path
	receiptPath, expect, err := findReceipt(cfg.archive, cfg.receipt)
	if err != nil {
		fmt.Fprintf(stderr, "backup verify: %v\n", err)
		return exitFailed
	}
	res, err := archive.Verify(ctx, cfg.archive, archive.VerifyOptions{Expect: expect})
	if err != nil {
		if cfg.json && ctx.Err() == nil {
			// A script reading stdout gets an answer even when nothing could be read.
			writeJSON(stdout, verifyOutput{Archive: cfg.archive, VerifyResult: &archive.VerifyResult{
				Problems: []archive.Problem{{Reason: cause(err).Error()}}}})
		}
		return readFailed(ctx, stderr, "verify", cfg.archive, err)
	}
	if cfg.json {
		out := verifyOutput{Archive: cfg.archive, OK: res.OK(), VerifyResult: res}
		if receiptPath != "" {
			out.Receipt = &receiptPath
		}
		writeJSON(stdout, out)
	}
	if !res.OK() {
		for _, p := range res.Problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "backup verify: FAILED: %s in %s\n", plural(len(res.Problems), "problem", "problems"), cfg.archive)
		return exitFailed
	}
	if !cfg.json && !cfg.quiet {
		fmt.Fprintln(stdout, verifiedLine(res, receiptPath))
	}
	return exitComplete
}

func verifiedLine(res *archive.VerifyResult, receiptPath string) string {
	line := fmt.Sprintf("ok: %d files, %s verified", res.Files, report.FormatBytes(res.Bytes))
	if res.HasManifest {
		line += fmt.Sprintf(" (status recorded at backup: %s)", res.RecordedStatus)
	} else {
		line += " by CRC-32 only (no manifest: not made by backup)"
	}
	if receiptPath != "" {
		line += "; matches " + receiptPath
	}
	return line
}

// findReceipt reads the receipt to check the archive against: explicit when given (it must
// then be readable), else ARCHIVE.receipt.json when anything is there. It returns "" and nil
// when there is none.
func findReceipt(archivePath, explicit string) (string, *archive.Summary, error) {
	path := explicit
	if path == "" {
		path = backupset.ReceiptPath(archivePath)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return "", nil, nil
		}
	}
	rc, err := report.ReadReceipt(path)
	if err != nil {
		return "", nil, fmt.Errorf("receipt %s: %w", path, cause(err))
	}
	if rc.Archive == nil {
		return "", nil, fmt.Errorf("receipt %s: records no archive (status %s)", path, rc.Status)
	}
	return path, &archive.Summary{Size: rc.Archive.Size, SHA256: rc.Archive.SHA256}, nil
}

// readFailed reports an archive that could not be read at all, or an interrupted read.
func readFailed(ctx context.Context, stderr io.Writer, cmd, path string, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "backup %s: interrupted\n", cmd)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "backup %s: %s: %v\n", cmd, path, cause(err))
	return exitFailed
}

func writeJSON(w io.Writer, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	w.Write(append(data, '\n'))
}

// isTerminal reports whether w is a terminal, where a progress bar may be drawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// plural says "1 problem", "2 problems".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
