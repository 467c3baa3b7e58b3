package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/format"
	"backup/pathcheck"
	"backup/seal"
)

// The kinds of file create writes, which a run may replace inside a SOURCE folder when an
// earlier run wrote them there.
var (
	receiptKind = &pathcheck.Kind{Name: "a receipt", Is: func(path string) bool {
		_, err := format.ReadReceipt(path)
		return err == nil
	}}
	archiveKind = &pathcheck.Kind{Name: "a backup archive", Is: func(path string) bool {
		if strings.HasSuffix(path, backupset.SealedSuffix) {
			// An encrypted archive: its manifest is out of reach, and any age file starts
			// with the same magic; the receipt an earlier run wrote beside it must record it.
			return isSealedFile(path) && sealedReceiptRecords(path)
		}
		r, err := archive.Open(path)
		if err != nil {
			return false
		}
		defer r.Close()
		return r.HasManifest
	}}
	metricsKind = &pathcheck.Kind{Name: "a metrics file", Is: isMetricsFile}
)

// isMetricsFile says whether the file at path is one that --metrics-file wrote: every one
// starts with the HELP line of a backup_ metric.
func isMetricsFile(path string) bool {
	data, err := atomicfile.ReadRegular(path, 1<<20)
	return err == nil && bytes.HasPrefix(data, []byte("# HELP backup_"))
}

// checkOutputs puts create's outputs (the archive, its receipt, --metrics-file, and stdout's
// file when the run writes to stdout) and its inputs (each SOURCE, --exclude-from,
// --recipients-file and --identity files, --reference and its receipt, a backup set's
// folder) through the one check. inputFiles are the files those three flags name
// (fileArgs).
func (cfg *createConfig) checkOutputs(inputFiles []pathcheck.Arg, stdout io.Writer) error {
	var pc pathcheck.Check
	for _, s := range cfg.sources {
		src := pathcheck.Arg{What: "SOURCE " + s.Path, Path: s.Path}
		pc.Inputs = append(pc.Inputs, src)
		pc.Sources = append(pc.Sources, src)
	}
	pc.Inputs = append(pc.Inputs, inputFiles...)
	if ref := cfg.reuse.reference; ref != "" {
		pc.Inputs = append(pc.Inputs, pathcheck.Arg{What: "--reference " + ref, Path: ref},
			pathcheck.Arg{What: "the receipt of --reference " + ref, Path: format.ReceiptPath(ref)})
	}
	if cfg.set != nil && cfg.set.local() {
		pc.Sealed = append(pc.Sealed, pathcheck.Arg{What: "the backup set " + cfg.set.dir, Path: cfg.set.dir})
	}
	if cfg.set != nil && cfg.set.cache != nil && !cfg.dryRun {
		// Inside a SOURCE it is left out (rule self), as the run's other outputs are.
		pc.Outputs = append(pc.Outputs, pathcheck.Arg{What: "the cache folder " + cfg.set.cache.root, Path: cfg.set.cache.root, Folder: true})
	}
	if archive, ok := cfg.explicitArchive(); ok {
		pc.Outputs = append(pc.Outputs, pathcheck.Arg{What: "the archive (-o " + cfg.output + ")", Path: archive, Kind: archiveKind, File: true})
		if cfg.receipt == "" {
			receipt := format.ReceiptPath(archive)
			pc.Outputs = append(pc.Outputs, pathcheck.Arg{What: "the receipt " + receipt, Path: receipt, Kind: receiptKind, File: true})
		}
	}
	if out, ok := stdoutFile(stdout, cfg.stdoutWhat()); ok {
		pc.Outputs = append(pc.Outputs, out)
	}
	if cfg.receipt != "" {
		pc.Outputs = append(pc.Outputs, pathcheck.Arg{What: "--receipt " + cfg.receipt, Path: cfg.receipt, Kind: receiptKind, File: true})
	}
	if cfg.metricsFile != "" && !cfg.dryRun {
		pc.Outputs = append(pc.Outputs, pathcheck.Arg{What: "--metrics-file " + cfg.metricsFile, Path: cfg.metricsFile, Kind: metricsKind, File: true})
	}
	if err := pc.Err(); err != nil {
		return err
	}
	if cfg.set != nil && cfg.set.cache != nil && !cfg.dryRun {
		// The run replaces the copy there, and stdout's file with it when it is the copy; the
		// next run removes a file there named like an archive (a --metrics-file).
		root := pathcheck.Arg{What: "the cache folder " + cfg.set.cache.root, Path: cfg.set.cache.root}
		if err := checkStdoutNotIn(stdout, cfg.stdoutWhat(), root); err != nil {
			return err
		}
		if cfg.metricsFile != "" {
			metrics := pathcheck.Arg{What: "--metrics-file " + cfg.metricsFile, Path: cfg.metricsFile}
			if err := (pathcheck.Check{Sealed: []pathcheck.Arg{root}, Outputs: []pathcheck.Arg{metrics}}).Err(); err != nil {
				return err
			}
		}
	}
	if !cfg.dryRun {
		if err := refuseMetricsInSet(cfg.metricsFile); err != nil {
			return err
		}
	}
	if err := cfg.checkNotIntoSet(); err != nil {
		return err
	}
	return cfg.checkSetNotSource()
}

// checkSealedSetClear refuses an encrypted run into a set in a folder that would write what
// it holds in clear into that folder: its stderr, when it is a file there (2>>SET/backup.log),
// which names the files backed up (every one under -v, those warned about or skipped without);
// and $TMPDIR, when it is the folder or inside it (TMPDIR=/mnt/nas/set), where an encrypted
// run stages its plaintext (SQLite snapshots, spilled entries) to keep it off the set's
// folder, perhaps a network file system. stdout's file is refused inside any set by the one
// check; stderr is not one of its outputs, which may share a file with it (2>&1), and is the
// process's fd 2, whatever writer the command wraps it in.
func (cfg *createConfig) checkSealedSetClear() error {
	if cfg.recipients == nil || cfg.set == nil || !cfg.set.local() {
		return nil
	}
	set := pathcheck.Arg{What: "the encrypted backup set " + cfg.set.dir, Path: cfg.set.dir}
	clear := []pathcheck.Arg{{What: "$TMPDIR " + os.TempDir(), Path: os.TempDir(), Folder: true}}
	if out, ok := stdoutFile(os.Stderr, "stderr"); ok {
		clear = append(clear, out)
	}
	for _, out := range clear {
		if err := (pathcheck.Check{Sealed: []pathcheck.Arg{set}, Outputs: []pathcheck.Arg{out}}).Err(); err != nil {
			return fmt.Errorf("%w: an encrypted run writes plaintext there (file names, or the files' contents), which an encrypted set must not hold", err)
		}
	}
	return nil
}

// checkNotIntoSet refuses a run that is not a set's (-o, or the implicit --output-dir .)
// whose archive or --receipt would be written into a backup set's folder: a set holds what
// its runs write, under its lock and read back; another archive there is one of its runs to
// status and prune (a receipt alone, one of unknown status), and -o SET/RUN --force would
// replace one of its backups. A folder that cannot be listed is no set known, and fails
// where the file is written.
func (cfg *createConfig) checkNotIntoSet() error {
	if cfg.set != nil {
		return nil
	}
	if !cfg.toStdout() {
		if err := refuseSetFolder(cfg.archiveFolder()); err != nil {
			return err
		}
	}
	if cfg.receipt != "" {
		dir := atomicfile.DirOf(cfg.receipt)
		return refuseSetFolder(dir, "--receipt "+format.QuoteName(cfg.receipt)+": its folder, "+format.QuoteName(dir)+",")
	}
	return nil
}

// archiveFolder is the folder the archive of a run that is not a set's goes into, and how
// an error names it.
func (cfg *createConfig) archiveFolder() (folder, what string) {
	if cfg.output == "" {
		// Without -o, the archive goes into --output-dir's default, the current folder.
		return cfg.outputDir, "the current folder"
	}
	what = "-o " + format.QuoteName(cfg.output) + ":"
	if _, ok := cfg.explicitArchive(); ok {
		return atomicfile.DirOf(cfg.output), what + " its folder, " + format.QuoteName(atomicfile.DirOf(cfg.output)) + ","
	}
	return cfg.output, what
}

// refuseSetFolder refuses folder, named by what, when it is a backup set.
func refuseSetFolder(folder, what string) error {
	if marker := (backupset.Folder{Dir: folder}).Marker(context.Background()); marker != "" {
		return fmt.Errorf("%s is a backup set (it holds %s): add a run to it with --output-dir %s", what, marker, format.QuoteName(folder))
	}
	return nil
}

// refuseMetricsInSet refuses a --metrics-file in the folder of any backup set, not only the
// one the command runs on (the one check's Sealed folder): written there it would replace
// that set's LATEST or lock, or be a foreign file among its runs.
func refuseMetricsInSet(metricsFile string) error {
	if metricsFile == "" {
		return nil
	}
	dir := atomicfile.DirOf(metricsFile)
	if marker := (backupset.Folder{Dir: dir}).Marker(context.Background()); marker != "" {
		return fmt.Errorf("--metrics-file %s: its folder, %s, is a backup set (it holds %s): write the metrics outside it", format.QuoteName(metricsFile), format.QuoteName(dir), marker)
	}
	return nil
}

// checkSetNotSource refuses a local backup set that is itself a SOURCE: each run would store
// the set's earlier backups, each holding the ones before it. (A set inside a SOURCE is left
// out of it whole, rule self: see engineOptions.)
func (cfg *createConfig) checkSetNotSource() error {
	if cfg.set == nil || !cfg.set.local() {
		return nil
	}
	if isSource(cfg.sources, cfg.set.dir) {
		return fmt.Errorf("the backup set %s is a SOURCE: each run would store the backups before it (back up the folder that holds it, or keep the set elsewhere)", format.QuoteName(cfg.set.dir))
	}
	return nil
}

// stdoutWhat names what the run writes to stdout, or "" when it writes nothing there.
func (cfg *createConfig) stdoutWhat() string {
	switch {
	case cfg.toStdout():
		return "stdout (the archive, -o -)"
	case cfg.json:
		return "stdout (--json)"
	case cfg.jsonLines:
		return "stdout (--json-lines)"
	}
	return ""
}

// stdoutFile is stdout as an output, when what is written there goes into a regular file (a
// shell's > FILE): that file must not be another output or an input. Once, -o - --receipt
// F > F replaced the archive streamed into F with its receipt, and the run said complete.
func stdoutFile(stdout io.Writer, what string) (pathcheck.Arg, bool) {
	f, ok := stdout.(*os.File)
	if what == "" || !ok {
		return pathcheck.Arg{}, false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return pathcheck.Arg{}, false
	}
	return pathcheck.Arg{What: what, Path: openPath(f, info), Info: info}, true
}

// openPath is the path of the open file f (info), as /proc/self/fd says, while that path
// still names it; "" when it does not (removed, renamed, replaced). With it, the one check
// finds stdout's file inside a folder at any depth (a restore's DEST), not only directly in
// it.
func openPath(f *os.File, info os.FileInfo) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil || !filepath.IsAbs(p) {
		return ""
	}
	if at, err := os.Stat(p); err != nil || !os.SameFile(at, info) {
		return ""
	}
	return p
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

// fileArgs are the files a flag names, as inputs of the one check.
func fileArgs(flag string, paths []string) []pathcheck.Arg {
	var args []pathcheck.Arg
	for _, p := range paths {
		args = append(args, pathcheck.Arg{What: flag + " " + p, Path: p})
	}
	return args
}

// sealedReceiptRecords says whether the receipt beside the encrypted archive at path is one
// a run wrote for it: a receipt of an encrypted archive of that name and size.
func sealedReceiptRecords(path string) bool {
	rc, err := format.ReadReceipt(format.ReceiptPath(path))
	if err != nil || rc.Encryption == nil || rc.Archive == nil || filepath.Base(rc.Archive.Path) != filepath.Base(path) {
		return false
	}
	info, err := os.Lstat(path)
	return err == nil && info.Size() == rc.Archive.Size
}

// isSealedFile says whether the file at path is a regular file holding an age file.
func isSealedFile(path string) bool {
	f, _, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return seal.IsSealed(f)
}
