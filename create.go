package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"backup/archive"
	"backup/backupset"
	"backup/engine"
	"backup/format"
	"backup/hooks"
	"backup/pathcheck"
	"backup/report"
	"backup/seal"
	"backup/skiprules"
)

const createLong = `Backs up each SOURCE (a directory or a regular file) into one zip archive, stored under its
base name. Regular files and directories are archived, with their owners; sockets, FIFOs,
devices and symlinks are skipped and listed (--symlinks store stores symlinks as links, never
followed; --xattrs records extended attributes and ACLs). A receipt (JSON) is written next
to the archive.

With --output-dir DIR (and no -o), DIR is a backup set: the run holds DIR's lock, reads the
new archive back, and points DIR/LATEST at it only when it is complete and verified; then
the --keep-* rules prune older backups (see backup help prune).

With --recipient or --recipients-file, the archive is encrypted with age to those public
keys: one age file holding the whole zip (default name <UTC time>.zip.age, which names no
source), that age -d opens without backup. Its receipt names no path. Reading it back, and
copying unchanged files from an encrypted reference, take --identity; a host with no key
backs up all the same (see docs/encryption.md).

Files are deflated (level 6 unless --level says otherwise), so every unzip reads the archive.
--method zstd writes Zstandard entries instead, which 7-Zip, bsdtar and backup verify, list
and restore read, but Info-ZIP unzip 6.0 (the usual unzip on Linux) cannot.`

const createExitCodes = `0 complete, 1 failed (no new archive; in a set also a new archive that failed its
read-back, a LATEST that could not be moved, or a --keep-* prune that failed after LATEST
moved), 2 usage, 3 incomplete (some data could not be read), 4 the set is locked by another
run, 130 interrupted.`

// maxJobs caps --jobs. Each job holds up to three 1 MiB read buffers and two compressors, so
// 128 jobs may take some 400 MiB, and more jobs than cores only help while reads wait on
// slow storage; past that a typo (-j 100000000) would only exhaust memory.
const maxJobs = 128

// createConfig is the create command's flags after validation.
type createConfig struct {
	output, outputDir, receipt string
	rules                      skiprules.Rules
	excludes, excludeFrom      []string // -x and --exclude-from as given, read again after the before hooks
	// checkInputs are the files the one check of outputs takes as inputs beside the
	// SOURCEs, checked again after the before hooks (fileArgs).
	checkInputs                []pathcheck.Arg
	patterns                   []string // every exclude pattern, -x's and the files' lines, as last read
	level, jobs                int
	method                     format.Method
	policy                     report.Policy
	json, quiet, force, dryRun bool
	jsonLines, verbose         bool
	verify, xattrs             bool
	sqlite                     bool // --sqlite auto: databases are stored as snapshots
	sqliteTimeout              time.Duration
	progress, symlinks         string
	metricsFile                string
	hooks                      *hooks.Commands
	reuse                      reuseFlags
	sources                    []engine.Source
	unreachable                error      // a SOURCE the kernel cannot reach: the run's error
	set                        *setConfig // nil unless the run writes into a backup set
	// recipients encrypt the archive (nil: a plain zip); identities decrypt an encrypted
	// reference, and let the read-back check an encrypted archive's contents.
	recipients     *seal.Recipients
	identities     *seal.Identities
	allowPlaintext bool // --allow-plaintext: a set may hold both kinds
}

// setConfig is how a run into a backup set (--output-dir DIR without -o) treats the set.
type setConfig struct {
	dir                string // absolute, or s3://BUCKET/PREFIX
	store              backupset.Store
	wait               time.Duration
	activateIncomplete bool
	keep               backupset.Policy
	prune              bool // a --keep-* rule was given
	// reusesLatest says the run copies unchanged entries from LATEST's archive (a folder
	// set, without --reread or --reference).
	reusesLatest bool
	// pointerSaid is set once the run has said that LATEST itself is damaged (see lock):
	// a junk pointer is said in one line, not again by each step that reads it.
	pointerSaid bool
	// cache keeps a copy of a bucket set's last archive to reuse from; nil for a folder set
	// or with --no-cache. noCache says why there is none when there should be one.
	cache   *setCache
	noCache error
}

// createFlags are create's flags as parsed, before validation turns them into a createConfig.
type createFlags struct {
	cfg                           createConfig
	excludes, excludeFrom, failOn []string
	method                        string
	wait                          durationFlag
	activate                      bool
	keep                          *keepFlags
	sqlite                        *sqliteFlags
	s3                            *s3Flags
	cache                         cacheFlags
	keys                          recipientFlags
	identity                      *identityFlag
}

func newCreateCmd() *cobra.Command {
	cmd := newCommand("create [flags] SOURCE...", "back up SOURCE... into a new zip archive", createLong, createExitCodes)
	f := addCreateFlags(cmd.Flags())
	for flag, values := range map[string][]string{"method": {"deflate", "zstd"}, "sqlite": {"auto", "off"}, "progress": {"auto", "always", "never"}, "fail-on": format.FailOnOps, "symlinks": {"skip", "store"}, "level": {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}} {
		cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		cfg, err := f.validated(cmd.Flags(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		if err != nil {
			return usageError(cmd.ErrOrStderr(), "create", err)
		}
		return createBackup(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	return cmd
}

// addCreateFlags defines create's flags in the order a user needs them: where the archive
// goes, what is left out, how it is compressed, what counts as complete, what is printed,
// and last the flags of a backup set.
func addCreateFlags(flags *pflag.FlagSet) *createFlags {
	f := &createFlags{}
	cfg := &f.cfg
	flags.StringVarP(&cfg.output, "output", "o", "", "write the archive to `PATH`; an existing directory means the default name inside it; - means stdout (with --receipt)")
	flags.StringVar(&cfg.outputDir, "output-dir", ".", "write the archive into `DIR` under the default name <name>-<UTC time>.zip (encrypted: <UTC time>.zip.age); given explicitly, DIR is a backup set")
	flags.StringVar(&cfg.receipt, "receipt", "", "write the receipt to `PATH` (default: the archive's path + \".receipt.json\")")
	flags.StringArrayVarP(&f.excludes, "exclude", "x", nil, "exclude paths matching `PATTERN` (gitignore syntax, below the source); repeatable")
	flags.StringArrayVar(&f.excludeFrom, "exclude-from", nil, "read exclude patterns from `FILE`, one a line; repeatable")
	flags.BoolVar(&cfg.rules.ExcludeCaches, "exclude-caches", false, "skip directories holding a valid CACHEDIR.TAG")
	flags.BoolVar(&cfg.rules.OneFileSystem, "one-file-system", false, "do not cross into other file systems")
	flags.StringVar(&cfg.symlinks, "symlinks", "skip", "symlinks below a SOURCE: `MODE` skip (list them) or store (as links, never followed)")
	flags.BoolVar(&cfg.xattrs, "xattrs", false, "store extended attributes and ACLs in the manifest")
	flags.IntVar(&cfg.level, "level", archive.DefaultLevel, "compress at level `N`: 1 (fast) to 9 (small); 0 stores")
	flags.StringVar(&f.method, "method", string(format.Deflate), "compress with `METHOD`: deflate, or zstd (read by 7-Zip and bsdtar, NOT by Info-ZIP unzip 6.0)")
	flags.IntVarP(&cfg.jobs, "jobs", "j", 0, fmt.Sprintf("compress `N` files in parallel, 1 to %d; 0 (the default): one per CPU", maxJobs))
	flags.StringArrayVar(&f.keys.recipients, "recipient", nil, "encrypt the archive with age to `RECIPIENT` (age1…, age1pq1…, or an SSH public key); repeatable")
	flags.StringArrayVar(&f.keys.files, "recipients-file", nil, "encrypt the archive to the recipients in `FILE`, one a line (age's format); repeatable")
	flags.StringVar(&cfg.reuse.reference, "reference", "", "copy the entries of unchanged files from `ARCHIVE` (in a backup set: the one LATEST names)")
	f.identity = addIdentityFlag(flags, "decrypt an encrypted reference (and read an encrypted archive back whole) with the identity in `FILE`; repeatable")
	flags.BoolVar(&cfg.reuse.reread, "reread", false, "read and compress every file; copy nothing from a reference")
	flags.BoolVar(&cfg.reuse.opts.IgnoreInode, "ignore-inode", false, "count a file as unchanged whatever its inode number and change time (FUSE, some network file systems)")
	flags.BoolVar(&cfg.reuse.opts.IgnoreCtime, "ignore-ctime", false, "count a file as unchanged whatever its change time")
	f.sqlite = addSQLiteFlags(flags)
	flags.BoolVar(&cfg.policy.Strict, "strict", false, "any warning makes the backup incomplete")
	flags.StringSliceVar(&f.failOn, "fail-on", nil, "also count the warnings of these `KINDS` as lost: "+strings.Join(format.FailOnOps, ","))
	flags.BoolVar(&cfg.json, "json", false, "also print the receipt to stdout")
	flags.BoolVar(&cfg.jsonLines, "json-lines", false, "print events to stdout as they happen, one JSON object a line, the receipt last")
	flags.BoolVarP(&cfg.quiet, "quiet", "q", false, "print nothing unless the backup is not complete, or a backup it would copy from is damaged")
	flags.BoolVarP(&cfg.verbose, "verbose", "v", false, "list each path on stderr as it is archived")
	flags.StringVar(&cfg.progress, "progress", "auto", "draw a progress bar `WHEN`: auto (when stderr is a terminal), always, never")
	flags.StringVar(&cfg.metricsFile, "metrics-file", "", "write Prometheus metrics of the run to `PATH` (node_exporter textfile collector), whatever the outcome")
	cfg.hooks = addHookFlags(flags)
	flags.BoolVar(&cfg.force, "force", false, "replace an existing archive at --output once the new one is whole")
	flags.BoolVarP(&cfg.dryRun, "dry-run", "n", false, "walk and classify only; write nothing, run no hook")
	flags.BoolVar(&cfg.verify, "verify", false, "read the finished archive back and check it before putting it in place")
	flags.Var(&f.wait, "wait", "backup set: wait up to `DURATION` for another run to finish instead of exiting 4")
	flags.BoolVar(&f.activate, "activate-incomplete", false, "backup set: point LATEST at an incomplete backup too")
	flags.BoolVar(&f.keys.allowPlaintext, "allow-plaintext", false, "backup set: take a plain run into an encrypted set, or an encrypted run into a plain one")
	f.keep = addKeepFlags(flags)
	f.s3 = addS3Flags(flags)
	flags.StringVar(&f.cache.dir, "cache-dir", "", "backup set in a bucket: keep a copy of the last archive in `DIR`, to copy unchanged files from (default: $XDG_CACHE_HOME/backup, else ~/.cache/backup)")
	flags.BoolVar(&f.cache.off, "no-cache", false, "backup set in a bucket: keep no local copy (every run reads every file)")
	return f
}

// validated checks the flags and the SOURCE arguments, and returns the run's config or a
// usage error. stdout is where the run will write, an output like the others.
func (f *createFlags) validated(flags *pflag.FlagSet, args []string, stdout, stderr io.Writer) (createConfig, error) {
	cfg := f.cfg
	cfg.policy.FailOn = f.failOn
	cfg.method = format.Method(f.method)
	cfg.allowPlaintext = f.keys.allowPlaintext
	cfg.hooks = runHooks(cfg.hooks, cfg.dryRun)
	err := refuseEmpty(flags, []string{"output", "output-dir", "receipt", "exclude-from", "metrics-file", "reference", "cache-dir", "recipients-file", "identity"}, args, "SOURCE")
	if err == nil && flags.Changed("fail-on") && len(f.failOn) == 0 {
		// The comma list of nothing: an unset $KINDS would count nothing as lost, and a run
		// meant to fail on those kinds would say complete.
		err = fmt.Errorf("--fail-on is empty: give one or more of %s", strings.Join(format.FailOnOps, ","))
	}
	if err == nil {
		err = refuseDash(flags, "output-dir", "receipt", "metrics-file", "cache-dir")
	}
	if err == nil {
		cfg.recipients, err = f.keys.load(stderr)
	}
	if err == nil {
		cfg.identities, err = f.identity.load(stderr, "backup create")
	}
	if err == nil {
		err = f.sqlite.validate(&cfg)
	}
	if err == nil {
		err = cfg.validate(args, f.excludes, f.excludeFrom)
	}
	if err == nil {
		err = cfg.refusePlainAsSealed()
	}
	if err == nil {
		for _, w := range sourcePathPatterns(cfg.patterns, cfg.sources) {
			sayf(stderr, "backup create: warning: %s\n", w)
		}
	}
	if err == nil {
		err = cfg.validateSet(flags, time.Duration(f.wait), f.activate, f.keep, f.s3)
	}
	if err == nil {
		err = cfg.checkSeriesName()
	}
	if err == nil {
		err = cfg.validateCache(flags, f.cache, f.s3)
	}
	if err == nil {
		cfg.checkInputs = slices.Concat(fileArgs("--exclude-from", f.excludeFrom), fileArgs("--recipients-file", f.keys.files), fileArgs("--identity", f.identity.paths))
		err = cfg.checkOutputs(cfg.checkInputs, stdout)
	}
	if err == nil {
		err = cfg.checkSealedSetClear()
	}
	return cfg, err
}

func (cfg *createConfig) validate(args, excludes, excludeFrom []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no SOURCE given")
	}
	if cfg.level < 0 || cfg.level > 9 {
		return fmt.Errorf("--level %d: must be 0 to 9", cfg.level)
	}
	if cfg.method != format.Deflate && cfg.method != format.Zstd {
		return fmt.Errorf("--method %q: must be deflate or zstd", cfg.method)
	}
	if cfg.jobs < 0 || cfg.jobs > maxJobs {
		return fmt.Errorf("--jobs %d: must be 1 to %d (0: one per CPU)", cfg.jobs, maxJobs)
	}
	if cfg.json && cfg.jsonLines {
		return fmt.Errorf("--json and --json-lines cannot be used together: both print to stdout")
	}
	if cfg.quiet && cfg.verbose {
		return fmt.Errorf("-q and -v cannot be used together")
	}
	if cfg.reuse.reread && cfg.reuse.reference != "" {
		return fmt.Errorf("--reread and --reference: choose one")
	}
	if cfg.symlinks != "skip" && cfg.symlinks != "store" {
		return fmt.Errorf("--symlinks %q: must be skip or store", cfg.symlinks)
	}
	cfg.rules.StoreSymlinks = cfg.symlinks == "store"
	if !slices.Contains([]string{"auto", "always", "never"}, cfg.progress) {
		return fmt.Errorf("--progress %q: must be auto, always or never", cfg.progress)
	}
	for _, op := range cfg.policy.FailOn {
		if !slices.Contains(format.FailOnOps, op) {
			return fmt.Errorf("--fail-on %q: must be one of %s", op, strings.Join(format.FailOnOps, ","))
		}
	}
	if err := cfg.readExcludes(excludes, excludeFrom); err != nil {
		return err
	}
	if err := cfg.setSources(args); err != nil {
		return err
	}
	return cfg.validateStdout()
}

func (cfg *createConfig) readExcludes(excludes, files []string) error {
	cfg.excludes, cfg.excludeFrom = excludes, files
	if err := checkPatternArgs("--exclude", excludes); err != nil {
		return err
	}
	var patterns []string
	// Where each file's lines begin in patterns, and (last) where the files' lines end.
	starts := make([]int, 0, len(files)+1)
	for _, name := range files {
		starts = append(starts, len(patterns))
		// Opened without blocking and checked, as every file a command reads: a FIFO no one
		// writes to would hang the run before it starts, a device would be read for ever.
		f, _, err := openRegular(name)
		if err != nil {
			return fmt.Errorf("--exclude-from %s: %w", name, cause(err))
		}
		lines, err := skiprules.ReadPatterns(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("--exclude-from %s: %w", name, err)
		}
		patterns = append(patterns, lines...)
	}
	starts = append(starts, len(patterns))
	// The last matching pattern decides, and git lets a pattern on the command line decide
	// over a file's lines (ls-files --exclude over --exclude-from), wherever each flag stands.
	patterns = append(patterns, excludes...)
	m, err := skiprules.ParsePatterns(patterns)
	if err != nil {
		return excludeFromError(err, files, starts)
	}
	cfg.rules.Exclude, cfg.patterns = m, patterns
	return nil
}

// excludeFromError names where the user wrote the pattern ParsePatterns refused: the file
// and line of an --exclude-from file (file i's lines are patterns[starts[i]:starts[i+1]]),
// else --exclude.
func excludeFromError(err error, files []string, starts []int) error {
	var pe *skiprules.PatternError
	if errors.As(err, &pe) {
		for i, name := range files {
			if pe.Index >= starts[i] && pe.Index < starts[i+1] {
				return fmt.Errorf("--exclude-from %s: line %d: %w", name, pe.Index-starts[i]+1, err)
			}
		}
	}
	return fmt.Errorf("--exclude: %w", err)
}

// checkPatternArgs refuses a pattern given to flag on the command line that gitignore syntax
// would read otherwise than typed (skiprules.CheckArg); a file of patterns keeps the syntax's
// comments, blank lines and trimmed spaces.
func checkPatternArgs(flag string, patterns []string) error {
	for _, p := range patterns {
		if err := skiprules.CheckArg(p); err != nil {
			return fmt.Errorf("%s %s: %w", flag, skiprules.QuotePattern(p), err)
		}
	}
	return nil
}

// sourcePathPatterns warns of each pattern that spells a SOURCE's own path (-x
// /srv/app/secrets with SOURCE /srv/app, as restic and borg take it): patterns are matched
// below each SOURCE, so it names /srv/app/srv/app/secrets and what was meant to stay out is
// archived. A warning, not an error: such a path may be there.
func sourcePathPatterns(patterns []string, sources []engine.Source) []string {
	var warnings []string
	for _, p := range patterns {
		for _, s := range sources {
			root := filepath.Clean(s.Path)
			rest, ok := strings.CutPrefix(p, root+"/")
			if !ok || root == "/" || strings.Trim(rest, "/") == "" {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("--exclude %q is matched below each SOURCE: to leave out %s, write %q",
				p, strings.TrimRight(p, "/"), "/"+rest))
			break
		}
	}
	return warnings
}

// setSources makes each SOURCE absolute and names it by its base name, as zip -r and tar do.
func (cfg *createConfig) setSources(args []string) error {
	seen := map[string]string{}
	for _, arg := range args {
		abs, err := absPath(arg)
		if err != nil {
			// Not a usage error: missing/../app cannot be reached, as missing/app cannot, and
			// the run fails as for a SOURCE that does not exist (a failed receipt, exit 1).
			if cfg.unreachable == nil {
				cfg.unreachable = fmt.Errorf("source %s: %w", arg, cause(err))
			}
			// Kept as given (the receipt lists it): cleaned, missing/../app would name
			// app, a folder that may be there and did not fail.
			abs = arg
		}
		name := filepath.Base(filepath.Clean(abs))
		if name == string(filepath.Separator) {
			name = "root"
		}
		if name == format.ManifestName {
			// The archive's manifest has that name: two entries of one name, and an unzip -o
			// would keep one of them.
			return fmt.Errorf("source %s would be stored as %s, the name of the archive's manifest; back up the folder that holds it", arg, name)
		}
		if prev, ok := seen[name]; ok {
			return fmt.Errorf("sources %s and %s would both be stored as %q", prev, arg, name)
		}
		seen[name] = arg
		cfg.sources = append(cfg.sources, engine.Source{Path: abs, Name: name})
	}
	return nil
}
