package main

import (
	"bytes"
	"io"
	"os"

	"backup/archive"
	"backup/atomicfile"
	"backup/format"
)

// The kinds of file create writes, which a run may replace inside a SOURCE folder when an
// earlier run wrote them there.
var (
	receiptKind = &outputKind{"a receipt", func(path string) bool {
		_, err := format.ReadReceipt(path)
		return err == nil
	}}
	archiveKind = &outputKind{"a backup archive", func(path string) bool {
		r, err := archive.Open(path)
		if err != nil {
			return false
		}
		defer r.Close()
		return r.HasManifest
	}}
	metricsKind = &outputKind{"a metrics file", isMetricsFile}
)

// isMetricsFile says whether the file at path is one that --metrics-file wrote: every one
// starts with the HELP line of a backup_ metric.
func isMetricsFile(path string) bool {
	data, err := atomicfile.ReadRegular(path, 1<<20)
	return err == nil && bytes.HasPrefix(data, []byte("# HELP backup_"))
}

// checkOutputs puts create's outputs (the archive, its receipt, --metrics-file, and stdout's
// file when the run writes to stdout) and its inputs (each SOURCE, --exclude-from,
// --reference and its receipt, a backup set's folder) through the one check.
func (cfg *createConfig) checkOutputs(excludeFrom []string, stdout io.Writer) error {
	var pc pathCheck
	for _, s := range cfg.sources {
		src := pathArg{what: "SOURCE " + s.Path, path: s.Path}
		pc.inputs = append(pc.inputs, src)
		pc.sources = append(pc.sources, src)
	}
	for _, name := range excludeFrom {
		pc.inputs = append(pc.inputs, pathArg{what: "--exclude-from " + name, path: name})
	}
	if ref := cfg.reuse.reference; ref != "" {
		pc.inputs = append(pc.inputs, pathArg{what: "--reference " + ref, path: ref},
			pathArg{what: "the receipt of --reference " + ref, path: format.ReceiptPath(ref)})
	}
	if cfg.set != nil && cfg.set.local() {
		pc.sealed = append(pc.sealed, pathArg{what: "the backup set " + cfg.set.dir, path: cfg.set.dir})
	}
	if archive, ok := cfg.explicitArchive(); ok {
		pc.outputs = append(pc.outputs, pathArg{what: "the archive (-o " + cfg.output + ")", path: archive, kind: archiveKind, file: true})
		if cfg.receipt == "" {
			receipt := format.ReceiptPath(archive)
			pc.outputs = append(pc.outputs, pathArg{what: "the receipt " + receipt, path: receipt, kind: receiptKind, file: true})
		}
	}
	if out, ok := stdoutFile(stdout, cfg.stdoutWhat()); ok {
		pc.outputs = append(pc.outputs, out)
	}
	if cfg.receipt != "" {
		pc.outputs = append(pc.outputs, pathArg{what: "--receipt " + cfg.receipt, path: cfg.receipt, kind: receiptKind, file: true})
	}
	if cfg.metricsFile != "" && !cfg.dryRun {
		pc.outputs = append(pc.outputs, pathArg{what: "--metrics-file " + cfg.metricsFile, path: cfg.metricsFile, kind: metricsKind, file: true})
	}
	return pc.err()
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
func stdoutFile(stdout io.Writer, what string) (pathArg, bool) {
	f, ok := stdout.(*os.File)
	if what == "" || !ok {
		return pathArg{}, false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return pathArg{}, false
	}
	return pathArg{what: what, info: info}, true
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
