package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"backup/archive"
	"backup/report"
	"backup/skiprules"
)

const restoreUsage = `backup restore [--force] [--include PATTERN]... [--json] [-q] ARCHIVE DEST

ARCHIVE may be a backup set's folder: its LATEST backup is restored (a damaged or missing
LATEST is an error; no other archive is picked).

Extracts ARCHIVE into DEST (created when missing), never writing outside it, names byte for
byte. Unsafe names (absolute, "..", duplicates, paths through a symlink in the archive or in
DEST, and backslashes and drive letters in entries not made on Unix) refuse the whole
restore before anything is written, and so do files that exist already, unless --force.
Each file is written to a temp file, checked against the manifest's SHA-256 (the CRC-32 for
archives another tool made), then renamed into place. Symlinks, devices and other special
entries of foreign archives are listed, not created; in a backup's archive, an entry the
manifest does not list is damage and is not written.

Exit codes: 0 restored, 1 refused or failed (unsafe names, conflicts, unreadable or damaged
archive; damaged entries and those it cannot read are never written), 2 usage, 3 some entries could not be written
(each listed; the rest were), 130 interrupted.`

type restoreConfig struct {
	force, json, quiet bool
	include            *skiprules.Matcher
	archive, dest      string
}

// restoreOutput is what --json prints.
type restoreOutput struct {
	Archive   string            `json:"archive"`
	Dest      string            `json:"dest"`
	Status    string            `json:"status"` // complete, incomplete, refused or failed
	Files     int               `json:"files"`
	Dirs      int               `json:"dirs"`
	Bytes     int64             `json:"bytes"`
	Skipped   []archive.Skipped `json:"skipped"`
	Conflicts []string          `json:"conflicts"`
	Refused   []archive.Problem `json:"refused"`
	Damaged   []archive.Problem `json:"damaged"`
	Failed    []archive.Problem `json:"failed"`
	Error     string            `json:"error,omitempty"`
	plan      *archive.RestorePlan
}

func runRestore(args []string, stdout, stderr io.Writer) int {
	var cfg restoreConfig
	fs := pflag.NewFlagSet("restore", pflag.ContinueOnError)
	fs.BoolVar(&cfg.force, "force", false, "replace files that exist in DEST (never directories)")
	includes := fs.StringArray("include", nil, "restore only entries matching `PATTERN` (gitignore syntax, against the stored name); repeatable")
	fs.BoolVar(&cfg.json, "json", false, "print the result as JSON to stdout")
	fs.BoolVarP(&cfg.quiet, "quiet", "q", false, "print nothing when everything was restored")
	if code, done := parseFlags(fs, args, restoreUsage, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 2 {
		return usageError(stderr, "restore", fmt.Errorf("want ARCHIVE and DEST, got %d arguments", fs.NArg()))
	}
	if err := refuseEmpty(fs, nil, "ARCHIVE", "DEST"); err != nil {
		return usageError(stderr, "restore", err)
	}
	cfg.archive, cfg.dest = fs.Arg(0), fs.Arg(1)
	if len(*includes) > 0 {
		m, err := skiprules.ParsePatterns(*includes)
		if err != nil {
			return usageError(stderr, "restore", fmt.Errorf("--include: %w", err))
		}
		cfg.include = m
	}
	ctx, stop := interruptible()
	defer stop()
	return restoreArchive(ctx, cfg, stdout, stderr)
}

func restoreArchive(ctx context.Context, cfg restoreConfig, stdout, stderr io.Writer) int {
	out := &restoreOutput{Archive: cfg.archive, Dest: cfg.dest}
	path, err := resolveArchive(cfg.archive)
	if err != nil {
		msg := setError(cfg.archive, err)
		out.fail(cfg, stdout, errors.New(msg))
		fmt.Fprintf(stderr, "backup restore: %s\n", msg)
		return exitFailed
	}
	cfg.archive, out.Archive = path, path
	r, err := archive.Open(cfg.archive)
	if err != nil {
		out.fail(cfg, stdout, cause(err))
		return readFailed(ctx, stderr, "restore", cfg.archive, err)
	}
	defer r.Close()
	opts := archive.RestoreOptions{Force: cfg.force}
	if cfg.include != nil {
		opts.Include = func(name string, isDir bool) bool {
			_, matched := cfg.include.Match(name, isDir)
			return matched
		}
	}
	plan, err := r.PlanRestore(cfg.dest, opts)
	if err != nil {
		out.fail(cfg, stdout, err)
		fmt.Fprintf(stderr, "backup restore: %s: %v\n", cfg.archive, err)
		return exitFailed
	}
	out.plan, out.Skipped, out.Conflicts, out.Refused, out.Damaged = plan, plan.Skipped, plan.Conflicts, plan.Refused, plan.Damaged
	code := runPlan(ctx, cfg, r, out, stderr)
	if cfg.json {
		writeJSON(stdout, out.nonNil())
	}
	return code
}

// runPlan refuses or carries out the plan, printing what happened on stderr.
func runPlan(ctx context.Context, cfg restoreConfig, r *archive.Reader, out *restoreOutput, stderr io.Writer) int {
	plan := out.plan
	switch {
	case cfg.include != nil && plan.Files+plan.Dirs+len(plan.Skipped) == 0:
		out.Status, out.Error = "refused", "no entry matches --include"
		fmt.Fprintf(stderr, "backup restore: %s\n", out.Error)
		return exitFailed
	case !plan.OK():
		out.Status = "refused"
		writeRefusal(stderr, plan, cfg.force)
		return exitFailed
	}
	var p *report.Progress
	if !cfg.quiet && isTerminal(stderr) {
		p = report.StartProgress(stderr, func() (int64, int64) { return plan.BytesWritten(), plan.FilesDone() })
		p.SetTotal(plan.Bytes)
	}
	res, err := plan.Run(ctx)
	p.Stop()
	if res != nil {
		out.Files, out.Dirs, out.Bytes, out.Damaged, out.Failed = res.Files, res.Dirs, res.Bytes, res.Damaged, res.Failed
	}
	code := restoreCode(ctx, res, err)
	out.Status = map[int]string{exitComplete: "complete", exitIncomplete: "incomplete", exitInterrupted: "interrupted"}[code]
	if out.Status == "" {
		out.Status = "failed"
	}
	if err != nil {
		out.Error = err.Error()
	}
	if code != exitComplete || !cfg.quiet {
		writeRestoreSummary(stderr, cfg, r, out, err)
	}
	return code
}

func restoreCode(ctx context.Context, res *archive.RestoreResult, err error) int {
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case err != nil || len(res.Damaged) > 0:
		return exitFailed
	case len(res.Failed) > 0:
		return exitIncomplete
	}
	return exitComplete
}

// maxRefusals is how many lines of each kind a refusal prints; --json lists them all.
const maxRefusals = 20

func writeRefusal(w io.Writer, plan *archive.RestorePlan, force bool) {
	var lines []string
	for _, p := range plan.Refused {
		lines = append(lines, p.String())
	}
	lines = capLines(lines)
	var why []string
	if n := len(plan.Refused); n > 0 {
		why = append(why, plural(n, "entry", "entries")+" unsafe or impossible")
	}
	if n := len(plan.Conflicts); n > 0 && !force {
		var conflicts []string
		for _, name := range plan.Conflicts {
			conflicts = append(conflicts, name+": exists in the destination (use --force to replace it)")
		}
		lines = append(lines, capLines(conflicts)...)
		why = append(why, plural(n, "file exists", "files exist"))
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "backup restore: refused, nothing written: %s\n", strings.Join(why, ", "))
}

func capLines(lines []string) []string {
	if len(lines) <= maxRefusals {
		return lines
	}
	return append(lines[:maxRefusals], fmt.Sprintf("  and %d more (--json lists them all)", len(lines)-maxRefusals))
}

func writeRestoreSummary(w io.Writer, cfg restoreConfig, r *archive.Reader, out *restoreOutput, err error) {
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "%s: not created (a %s entry)\n", s.Path, s.Kind)
	}
	for _, p := range out.Damaged {
		fmt.Fprintf(w, "%s (not restored)\n", p)
	}
	for _, p := range out.Failed {
		fmt.Fprintf(w, "%s (not restored)\n", p)
	}
	switch {
	case out.Status == "interrupted":
		fmt.Fprintf(w, "backup restore: interrupted after %d files; no partial file left\n", out.Files)
		return
	case out.Status == "failed" && err != nil:
		fmt.Fprintf(w, "backup restore: failed: %v\n", err)
	case out.Status == "failed" && len(out.Damaged) > 0:
		fmt.Fprintf(w, "backup restore: failed: %s could not be read (listed above), not restored; ", plural(len(out.Damaged), "entry", "entries"))
	default:
		fmt.Fprintf(w, "backup restore: %s: ", out.Status)
	}
	if err != nil {
		return
	}
	fmt.Fprintf(w, "%s, %s, %s restored to %s", plural(out.Files, "file", "files"), plural(out.Dirs, "dir", "dirs"),
		report.FormatBytes(out.Bytes), cfg.dest)
	if r.Manifest != nil {
		fmt.Fprintf(w, " (status recorded at backup: %s)", r.Manifest.Status)
	} else {
		fmt.Fprint(w, " (no manifest: checked by CRC-32 only)")
	}
	fmt.Fprintln(w)
}

// fail prints, with --json, the result of a restore that could not start.
func (o *restoreOutput) fail(cfg restoreConfig, stdout io.Writer, err error) {
	if cfg.json {
		o.Status, o.Error = "failed", err.Error()
		writeJSON(stdout, o.nonNil())
	}
}

// nonNil makes empty lists print as [] rather than null.
func (o *restoreOutput) nonNil() *restoreOutput {
	for _, l := range []*[]archive.Problem{&o.Refused, &o.Damaged, &o.Failed} {
		if *l == nil {
			*l = []archive.Problem{}
		}
	}
	if o.Skipped == nil {
		o.Skipped = []archive.Skipped{}
	}
	if o.Conflicts == nil {
		o.Conflicts = []string{}
	}
	return o
}
