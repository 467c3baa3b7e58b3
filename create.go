package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"backup/archive"
	"backup/backupset"
	"backup/report"
	"backup/skiprules"
)

const createUsage = `backup create [flags] SOURCE...

Backs up each SOURCE (a directory or a regular file) into one zip archive, stored under its
base name. Regular files and directories are archived; sockets, FIFOs, devices and symlinks
are skipped and listed. A receipt (JSON) is written next to the archive.

With --output-dir DIR (and no -o), DIR is a backup set: the run holds DIR's lock, reads the
new archive back, and points DIR/LATEST at it only when it is complete and verified; then
the --keep-* rules prune older backups (see backup help prune).

Files are deflated (level 6 unless --level says otherwise), so every unzip reads the archive.
--method zstd writes Zstandard entries instead, which 7-Zip, bsdtar and backup verify, list
and restore read, but Info-ZIP unzip 6.0 (the usual unzip on Linux) cannot.

Exit codes: 0 complete, 1 failed (no new archive, or LATEST could not be moved), 2 usage,
3 incomplete (some data could not be read), 4 the set is locked by another run,
130 interrupted.`

// maxJobs caps --jobs. Each job holds up to three 1 MiB read buffers and two compressors, so
// 128 jobs may take some 400 MiB, and more jobs than cores only help while reads wait on
// slow storage; past that a typo (-j 100000000) would only exhaust memory.
const maxJobs = 128

// createConfig is the create command's flags after validation.
type createConfig struct {
	output, outputDir, receipt string
	rules                      skiprules.Rules
	level, jobs                int
	method                     archive.Method
	policy                     report.Policy
	json, quiet, force, dryRun bool
	verify                     bool
	progress                   string
	sources                    []source
	set                        *setConfig // nil unless the run writes into a backup set
}

// setConfig is how a run into a backup set (--output-dir DIR without -o) treats the set.
type setConfig struct {
	dir                string // absolute
	wait               time.Duration
	activateIncomplete bool
	keep               backupset.Policy
	prune              bool // a --keep-* rule was given
}

// source is one SOURCE argument: its absolute path and the name it is stored under.
type source struct {
	path, name string
}

func runCreate(args []string, stdout, stderr io.Writer) int {
	cfg, code, done := parseCreate(args, stdout, stderr)
	if done {
		return code
	}
	return createBackup(cfg, stdout, stderr)
}

func parseCreate(args []string, stdout, stderr io.Writer) (cfg createConfig, code int, done bool) {
	fs := pflag.NewFlagSet("create", pflag.ContinueOnError)
	fs.StringVarP(&cfg.output, "output", "o", "", "archive to write; an existing directory means the default name inside it")
	fs.StringVar(&cfg.outputDir, "output-dir", ".", "folder for the default archive name <name>-<UTC time>.zip")
	fs.StringVar(&cfg.receipt, "receipt", "", "receipt to write (default: the archive's path + \".receipt.json\")")
	excludes := fs.StringArrayP("exclude", "x", nil, "exclude paths matching `PATTERN` (gitignore syntax, below the source); repeatable")
	excludeFrom := fs.StringArray("exclude-from", nil, "read exclude patterns from `FILE`, one a line; repeatable")
	fs.BoolVar(&cfg.rules.ExcludeCaches, "exclude-caches", false, "skip directories holding a valid CACHEDIR.TAG")
	fs.BoolVar(&cfg.rules.OneFileSystem, "one-file-system", false, "do not cross into other file systems")
	fs.IntVar(&cfg.level, "level", archive.DefaultLevel, "compression level 1 (fast) to 9 (small); 0 stores")
	method := fs.String("method", string(archive.Deflate), "deflate, or zstd (zip method 93: read by 7-Zip and bsdtar, NOT by Info-ZIP unzip 6.0)")
	fs.IntVarP(&cfg.jobs, "jobs", "j", 0, "files compressed in parallel, 1 to 128 (default: number of CPUs)")
	fs.BoolVar(&cfg.policy.Strict, "strict", false, "any warning makes the backup incomplete")
	failOn := fs.StringSlice("fail-on", nil, "also count these warnings as lost: vanished,changed,stat")
	fs.BoolVar(&cfg.json, "json", false, "also print the receipt to stdout")
	fs.BoolVarP(&cfg.quiet, "quiet", "q", false, "print nothing unless the backup is not complete")
	fs.StringVar(&cfg.progress, "progress", "auto", "progress bar: auto (when stderr is a terminal), always, never")
	fs.BoolVar(&cfg.force, "force", false, "replace an existing archive at --output once the new one is whole")
	fs.BoolVarP(&cfg.dryRun, "dry-run", "n", false, "walk and classify only; write nothing")
	fs.BoolVar(&cfg.verify, "verify", false, "read the finished archive back and check it before putting it in place")
	var wait durationFlag
	fs.Var(&wait, "wait", "backup set: wait up to `DURATION` for another run to finish instead of exiting 4")
	activate := fs.Bool("activate-incomplete", false, "backup set: point LATEST at an incomplete backup too")
	keep := addKeepFlags(fs)
	if code, done := parseFlags(fs, args, createUsage, stdout, stderr); done {
		return cfg, code, true
	}
	cfg.policy.FailOn = *failOn
	cfg.method = archive.Method(*method)
	err := refuseEmpty(fs, []string{"output", "output-dir", "receipt", "exclude-from"}, "SOURCE")
	if err == nil {
		err = cfg.validate(fs.Args(), *excludes, *excludeFrom)
	}
	if err == nil {
		err = cfg.validateSet(fs, time.Duration(wait), *activate, keep)
	}
	if err != nil {
		return cfg, usageError(stderr, "create", err), true
	}
	return cfg, 0, false
}

func (cfg *createConfig) validate(args, excludes, excludeFrom []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no SOURCE given")
	}
	if cfg.level < 0 || cfg.level > 9 {
		return fmt.Errorf("--level %d: must be 0 to 9", cfg.level)
	}
	if cfg.method != archive.Deflate && cfg.method != archive.Zstd {
		return fmt.Errorf("--method %q: must be deflate or zstd", cfg.method)
	}
	if cfg.jobs < 0 || cfg.jobs > maxJobs {
		return fmt.Errorf("--jobs %d: must be 1 to %d (0: one per CPU)", cfg.jobs, maxJobs)
	}
	if !slices.Contains([]string{"auto", "always", "never"}, cfg.progress) {
		return fmt.Errorf("--progress %q: must be auto, always or never", cfg.progress)
	}
	for _, op := range cfg.policy.FailOn {
		if !slices.Contains(report.FailOnOps, op) {
			return fmt.Errorf("--fail-on %q: must be one of %s", op, strings.Join(report.FailOnOps, ","))
		}
	}
	if err := cfg.readExcludes(excludes, excludeFrom); err != nil {
		return err
	}
	if err := cfg.setSources(args); err != nil {
		return err
	}
	return cfg.checkOutputs(excludeFrom)
}

func (cfg *createConfig) readExcludes(excludes, files []string) error {
	patterns := slices.Clone(excludes)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("--exclude-from: %w", err)
		}
		lines, err := skiprules.ReadPatterns(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("--exclude-from %s: %w", name, err)
		}
		patterns = append(patterns, lines...)
	}
	m, err := skiprules.ParsePatterns(patterns)
	if err != nil {
		return fmt.Errorf("--exclude: %w", err)
	}
	cfg.rules.Exclude = m
	return nil
}

// setSources makes each SOURCE absolute and names it by its base name, as zip -r and tar do.
func (cfg *createConfig) setSources(args []string) error {
	seen := map[string]string{}
	for _, arg := range args {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return fmt.Errorf("source %s: %w", arg, err)
		}
		name := filepath.Base(abs)
		if name == string(filepath.Separator) {
			name = "root"
		}
		if name == archive.ManifestName {
			// The archive's manifest has that name: two entries of one name, and an unzip -o
			// would keep one of them.
			return fmt.Errorf("source %s would be stored as %s, the name of the archive's manifest; back up the folder that holds it", arg, name)
		}
		if prev, ok := seen[name]; ok {
			return fmt.Errorf("sources %s and %s would both be stored as %q", prev, arg, name)
		}
		seen[name] = arg
		cfg.sources = append(cfg.sources, source{path: abs, name: name})
	}
	return nil
}
