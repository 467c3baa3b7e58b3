package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"backup/archive"
	"backup/format"
	"backup/report"
	"backup/seal"
)

const verifyLong = `ARCHIVE may be a backup set's folder: its LATEST backup is verified (a damaged or missing
LATEST is an error; no other archive is picked).

Reads ARCHIVE end to end without extracting anything: the zip structure, every local
header against the central directory, every entry's CRC-32, every file's SHA-256 and size
against the manifest, the entries against the manifest's list, and whether every name is
safe to restore. When a receipt is found (--receipt, else ARCHIVE.receipt.json when it
exists) the archive's size and SHA-256 must match it. An archive another tool made (no
manifest) is checked by CRC-32 alone.

An encrypted archive (an age file) is decrypted with --identity and checked as above, its
file against the receipt. Without --identity only its ciphertext is checked: the size and
SHA-256 against the receipt, and that its age header parses; the line says so.`

const verifyExitCodes = `0 verified, 1 anything wrong (each problem on its own line), a receipt that
cannot be read, or a --json or --json-lines answer that could not be written, 2 usage,
130 interrupted.`

type verifyConfig struct {
	receipt     string
	json, quiet bool
	jsonLines   bool
	jobs        int
	events      *report.Events // --json-lines, once started
	rereads     int            // how often the set was read again, its target gone (see superseded)
	archive     string
	found       string // the receipt the archive is checked against, once found; "" for none
	s3          *s3Flags
	identity    *identityFlag
	ids         *seal.Identities
}

// verifyJSON is what verify --json prints.
type verifyJSON struct {
	Archive    string  `json:"archive"`
	ArchiveB64 string  `json:"archive_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Receipt    *string `json:"receipt"`
	ReceiptB64 string  `json:"receipt_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	OK         bool    `json:"ok"`
	// Encrypted says the archive is an age file; ContentsChecked that its entries were
	// read (always, but for an encrypted archive verified without --identity).
	Encrypted       bool `json:"encrypted"`
	ContentsChecked bool `json:"contents_checked"`
	*archive.VerifyResult
}

func newVerifyCmd() *cobra.Command {
	cmd := newCommand("verify [flags] ARCHIVE", "check that an archive is whole, without extracting it", verifyLong, verifyExitCodes)
	var cfg verifyConfig
	flags := cmd.Flags()
	flags.StringVar(&cfg.receipt, "receipt", "", "receipt (`PATH`) to check the archive against (default: ARCHIVE.receipt.json when it exists)")
	flags.BoolVar(&cfg.json, "json", false, "print the result as JSON to stdout")
	flags.BoolVar(&cfg.jsonLines, "json-lines", false, "print each problem and then the result to stdout, one JSON object a line")
	flags.BoolVarP(&cfg.quiet, "quiet", "q", false, "print nothing when the archive verifies")
	flags.IntVarP(&cfg.jobs, "jobs", "j", 0, fmt.Sprintf("check `N` entries in parallel, 1 to %d; 0 (the default): one per CPU", maxJobs))
	cfg.identity = addIdentityFlag(flags, identityUsage+"; without, an encrypted archive's ciphertext is checked, not its contents")
	cfg.s3 = addS3Flags(flags)
	cfg.s3.spool = true
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		if cfg.json && cfg.jsonLines {
			return usageError(stderr, "verify", errors.New("--json and --json-lines cannot be used together: both print to stdout"))
		}
		if len(args) != 1 {
			return usageError(stderr, "verify", argCount("one ARCHIVE", len(args)))
		}
		err := refuseEmpty(flags, []string{"receipt", "identity"}, args, "ARCHIVE")
		if err == nil {
			cfg.ids, err = cfg.identity.load(stderr, "backup verify")
		}
		if err != nil {
			return usageError(stderr, "verify", err)
		}
		if err := cfg.s3.check(args[0]); err != nil {
			return usageError(stderr, "verify", err)
		}
		if cfg.jobs < 0 || cfg.jobs > maxJobs {
			return usageError(stderr, "verify", fmt.Errorf("--jobs %d: must be 1 to %d (0: one per CPU)", cfg.jobs, maxJobs))
		}
		if err := checkStdoutNotInput(stdout, args[0], cfg.receipt, cfg.identity.paths); err != nil {
			return usageError(stderr, "verify", err)
		}
		cfg.archive = args[0]
		ctx, stop := interruptible()
		defer stop()
		return verifyArchive(ctx, cfg, stdout, stderr)
	})
	return cmd
}

func verifyArchive(ctx context.Context, cfg verifyConfig, stdout, stderr io.Writer) int {
	if cfg.jsonLines && cfg.events == nil {
		cfg.events = report.NewEvents(stdout, "verify")
	}
	arg := cfg.archive
	ref, err := resolveArchive(ctx, cfg.archive, cfg.s3)
	if err != nil && ctx.Err() != nil {
		// A bucket's LATEST read cut short says only "context canceled".
		return cfg.interrupted(false, stdout, stderr)
	}
	if err != nil {
		sayf(stderr, "backup verify: %s\n", setError(cfg.archive, err))
		if cfg.json || cfg.jsonLines {
			return writeVerifyFailed(cfg, setError(cfg.archive, err), false, stdout, stderr)
		}
		return exitFailed
	}
	unlock := ref.pinNamed() // the receipt read next is of the archive read
	defer ref.close()
	cfg.archive, ref.ids = ref.path, cfg.ids
	receiptPath, rc, err := ref.receipt(cfg.receipt)
	unlock()
	cfg.found = receiptPath
	ref.sealedReceipt = rc != nil && rc.Encryption != nil
	if err != nil {
		sayf(stderr, "backup verify: %s\n", err.Error())
		if cfg.json || cfg.jsonLines {
			return writeVerifyFailed(cfg, err.Error(), false, stdout, stderr)
		}
		return exitFailed
	}
	sealed, err := ref.sealed(ctx)
	if err != nil {
		return cfg.readFailed(ctx, err, false, stdout, stderr)
	}
	if sealed && cfg.ids.Len() == 0 {
		return verifyCiphertext(ctx, cfg, ref, receiptPath, rc, stdout, stderr)
	}
	opts := archive.VerifyOptions{Jobs: cfg.jobs}
	if ref.entry.Receipt != nil {
		// A set's target: its entries must be of the source its name says (see proven).
		opts.Entries = func(entries []*archive.Entry) error { return targetOfSet(ref.entry.Name, entries) }
	}
	if rc != nil {
		sum, _ := rc.Summary() // findReceipt returns only a receipt that records an archive
		opts.Expect = &sum
	}
	p := cfg.startProgress(&opts)
	lift := limitMemory()
	res, err := ref.verify(ctx, opts)
	lift()
	p.Stop()
	if err == nil && rc != nil && res.HasManifest && res.ManifestRead {
		// The receipt's status is only its word; the manifest, covered by the SHA-256 just
		// checked, is the archive's. A foreign zip has no manifest and says so below.
		who := "receipt " + receiptPath
		if err := rc.StatusProven(who, true, res.RecordedStatus); err != nil {
			res.Problems = append(res.Problems, archive.Problem{Reason: err.Error()})
		}
		// Its counts are held to an archive found sound and its own: a damaged entry is not
		// counted, and another archive's receipt is a problem already.
		if err := rc.CountsProven(who, format.Counts{Files: res.Files, Bytes: res.Bytes, Dirs: res.Dirs}, res.Notes); err != nil && res.OK() {
			res.Problems = append(res.Problems, archive.Problem{Reason: err.Error()})
		}
	}
	if ref.readAgain(ctx, err, &cfg.rereads) {
		cfg.archive = arg
		return verifyArchive(ctx, cfg, stdout, stderr)
	}
	if err != nil {
		return cfg.readFailed(ctx, err, sealed, stdout, stderr)
	}
	out := verifyJSON{Archive: cfg.archive, OK: res.OK(), VerifyResult: res, Encrypted: sealed, ContentsChecked: true}
	return cfg.finish(out, verifiedLine(res, receiptPath), stdout, stderr)
}

// finish prints the verdict out holds (--json, --json-lines, or its problems and the FAILED
// line, or line when it verified) and returns the exit code.
func (cfg verifyConfig) finish(out verifyJSON, line string, stdout, stderr io.Writer) int {
	res := out.VerifyResult
	if cfg.json || cfg.jsonLines {
		if err := cfg.writeResult(stdout, out); err != nil {
			return jsonFailed(stderr, "verify", err)
		}
	}
	if !res.OK() {
		for _, p := range res.Problems {
			fmt.Fprintln(stderr, p)
		}
		sayf(stderr, "backup verify: FAILED: %s in %s\n", format.Plural(len(res.Problems), "problem", "problems"), format.QuoteName(cfg.archive))
		return exitFailed
	}
	if !cfg.json && !cfg.jsonLines && !cfg.quiet {
		fmt.Fprintln(stdout, line)
	}
	return exitComplete
}

func verifiedLine(res *archive.VerifyResult, receiptPath string) string {
	line := fmt.Sprintf("ok: %s, %s verified", format.Plural(res.Files, "file", "files"), report.FormatBytes(res.Bytes))
	if res.HasManifest {
		line += fmt.Sprintf(" (status recorded at backup: %s)", res.RecordedStatus)
	} else {
		line += " by CRC-32 only (no manifest: not made by backup)"
	}
	if receiptPath != "" {
		line += "; matches " + format.QuoteName(receiptPath)
	}
	return line
}

// findReceipt reads the receipt to check the archive against: explicit when given (it must
// then be readable), else ARCHIVE.receipt.json when anything is there. It returns "" and nil
// when there is none; a receipt it returns records an archive.
func findReceipt(archivePath, explicit string) (string, *format.Receipt, error) {
	path := explicit
	if path == "" {
		path = format.ReceiptPath(archivePath)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return "", nil, nil
		}
	}
	rc, err := format.ReadReceipt(path)
	if err != nil {
		return "", nil, fmt.Errorf("receipt %s: %w", path, cause(err))
	}
	if rc.Archive == nil {
		return "", nil, fmt.Errorf("receipt %s: records no archive (status %s)", path, rc.Status)
	}
	return path, rc, nil
}

// readFailed reports an archive that could not be read at all (see the function readFailed),
// and answers --json with it: a script reading stdout gets an answer even then.
func (cfg verifyConfig) readFailed(ctx context.Context, err error, sealed bool, stdout, stderr io.Writer) int {
	if ctx.Err() != nil {
		return cfg.interrupted(sealed, stdout, stderr)
	}
	code := readFailed(ctx, stderr, "verify", cfg.archive, err)
	if code == exitFailed && (cfg.json || cfg.jsonLines) {
		code = writeVerifyFailed(cfg, cause(err).Error(), sealed, stdout, stderr)
	}
	return code
}

// interrupted ends a verify that a SIGINT or SIGTERM stopped: one line on stderr, and with
// --json or --json-lines still the result (not ok, the problem "interrupted"), as create,
// restore and prune still answer, so that a --json-lines stream ends with its result; exit
// 130 whatever the answer's fate.
func (cfg verifyConfig) interrupted(sealed bool, stdout, stderr io.Writer) int {
	sayf(stderr, "backup verify: interrupted\n")
	if cfg.json || cfg.jsonLines {
		out := verifyJSON{Archive: cfg.archive, Encrypted: sealed, VerifyResult: &archive.VerifyResult{Problems: []archive.Problem{{Reason: "interrupted"}}}}
		if err := cfg.writeResult(stdout, out); err != nil {
			jsonFailed(stderr, "verify", err)
		}
	}
	return exitInterrupted
}

// writeVerifyFailed prints the --json answer for an archive that could not be read at all;
// encrypted says it is an age file (one no identity given opens, or cut short), as far as
// that was found.
func writeVerifyFailed(cfg verifyConfig, reason string, encrypted bool, stdout, stderr io.Writer) int {
	out := verifyJSON{Archive: cfg.archive, Encrypted: encrypted, VerifyResult: &archive.VerifyResult{Problems: []archive.Problem{{Reason: reason}}}}
	if err := cfg.writeResult(stdout, out); err != nil {
		return jsonFailed(stderr, "verify", err)
	}
	return exitFailed
}

// writeResult prints the result as --json does, or with --json-lines as the end of the
// stream: one "problem" line per problem, then the result. The receipt found and a path's
// base64 twin (when it is not UTF-8) are added here, on every way out: an interrupted or
// unreadable archive's answer names the receipt it was to be checked against too.
func (cfg verifyConfig) writeResult(stdout io.Writer, out verifyJSON) error {
	out.Archive, out.ArchiveB64 = format.JSONText(out.Archive)
	if cfg.found != "" {
		text, b64 := format.JSONText(cfg.found)
		out.Receipt, out.ReceiptB64 = &text, b64
	}
	if !cfg.jsonLines {
		return writeJSON(stdout, out)
	}
	emitProblems(cfg.events, problemList{"problem", out.Problems})
	return cfg.events.Result(out)
}

// startProgress sends progress events while the archive is checked, with --json-lines; nil
// otherwise.
func (cfg verifyConfig) startProgress(opts *archive.VerifyOptions) *report.Progress {
	if cfg.events == nil {
		return nil
	}
	vp := new(archive.VerifyProgress)
	opts.Progress = vp
	return report.StartProgress(report.ProgressOptions{
		Events: cfg.events,
		Poll:   func() (int64, int64, string) { return vp.Entries.Load(), vp.Bytes.Load(), "" },
		Totals: func() (int64, int64, bool) {
			entries := vp.TotalEntries.Load()
			return entries, vp.TotalBytes.Load(), entries > 0
		},
	})
}

// verdict turns a read-back's result into its error: the first problem, or ctx's error.
func verdict(ctx context.Context, res *archive.VerifyResult, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return cause(err)
	}
	return res.Err()
}
