package main

import (
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/pflag"

	"backup/archive"
)

const listUsage = `backup list [--json] [--long] ARCHIVE

ARCHIVE may be a backup set's folder: its LATEST backup is listed (a damaged or missing
LATEST is an error; no other archive is picked).

Lists the entries of ARCHIVE by their stored names (a directory's ends in "/"), the names
that restore --include matches. On stderr follow the status recorded at backup and what the
backup skipped and warned about. list reads the archive's directory and its manifest, not
the files' data: use verify to check that.

Exit codes: 0 listed, 1 the archive or its manifest cannot be read, 2 usage.`

// listEntry is one entry as list --json prints it.
type listEntry struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Mode     string    `json:"mode"`
	Modified time.Time `json:"mtime"`
	SHA256   string    `json:"sha256,omitempty"`
}

// listOutput is what list --json prints. The lists from the manifest are null without one.
type listOutput struct {
	Archive  string             `json:"archive"`
	Manifest bool               `json:"manifest"`
	Status   string             `json:"recorded_status"`
	Entries  []listEntry        `json:"entries"`
	Skipped  []archive.Skipped  `json:"skipped"`
	Excluded []archive.Excluded `json:"excluded"`
	Warnings []archive.Warning  `json:"warnings"`
}

func runList(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("list", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the entries and the manifest's lists as JSON")
	long := fs.BoolP("long", "l", false, "also print each entry's mode, size and mtime (UTC)")
	if code, done := parseFlags(fs, args, listUsage, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, "list", fmt.Errorf("want one ARCHIVE, got %d arguments", fs.NArg()))
	}
	if err := refuseEmpty(fs, nil, "ARCHIVE"); err != nil {
		return usageError(stderr, "list", err)
	}
	path, err := resolveArchive(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "backup list: %s\n", setError(fs.Arg(0), err))
		return exitFailed
	}
	r, err := archive.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "backup list: %s: %v\n", path, cause(err))
		return exitFailed
	}
	defer r.Close()
	if *asJSON {
		writeJSON(stdout, listJSON(path, r))
	} else {
		for _, e := range r.Entries {
			writeListLine(stdout, e, *long)
		}
	}
	if r.ManifestErr != nil {
		fmt.Fprintf(stderr, "backup list: %s: %s: %v\n", path, archive.ManifestName, r.ManifestErr)
		return exitFailed
	}
	if !*asJSON {
		writeManifestSummary(stderr, r)
	}
	return exitComplete
}

func writeListLine(w io.Writer, e *archive.Entry, long bool) {
	if !long {
		fmt.Fprintln(w, e.StoredName())
		return
	}
	fmt.Fprintf(w, "%s %12d %s %s\n", e.Mode, e.Size, e.Modified.UTC().Format("2006-01-02 15:04:05"), e.StoredName())
}

func listJSON(path string, r *archive.Reader) listOutput {
	out := listOutput{Archive: path, Manifest: r.HasManifest, Entries: []listEntry{}}
	for _, e := range r.Entries {
		out.Entries = append(out.Entries, listEntry{
			Name:     e.StoredName(),
			Type:     e.Type(),
			Size:     e.Size,
			Mode:     fmt.Sprintf("%04o", unixPerm(e.Mode)),
			Modified: e.Modified.UTC(),
			SHA256:   e.SHA256,
		})
	}
	if m := r.Manifest; m != nil {
		out.Status, out.Skipped, out.Excluded, out.Warnings = m.Status, m.Skipped, m.Excluded, m.Warnings
	}
	return out
}

// writeManifestSummary tells what the manifest recorded, on stderr so that stdout stays the
// list of names.
func writeManifestSummary(w io.Writer, r *archive.Reader) {
	m := r.Manifest
	if m == nil {
		fmt.Fprintf(w, "backup list: %d entries; no manifest: not made by backup\n", len(r.Entries))
		return
	}
	fmt.Fprintf(w, "backup list: %d entries; status recorded at backup: %s; %d skipped, %d excluded, %d warnings\n",
		len(r.Entries), m.Status, len(m.Skipped), len(m.Excluded), len(m.Warnings))
	for _, s := range m.Skipped {
		fmt.Fprintf(w, "  skipped %s (%s)\n", s.Path, s.Kind)
	}
	for _, wr := range m.Warnings {
		lost := ""
		if wr.Lost {
			lost = " (lost)"
		}
		fmt.Fprintf(w, "  warning %s: %s: %s%s\n", wr.Path, wr.Op, wr.Error, lost)
	}
}

// unixPerm is the mode's permission bits as chmod takes them, setuid, setgid and sticky
// included.
func unixPerm(m fs.FileMode) uint32 {
	perm := uint32(m.Perm())
	for bit, flag := range map[uint32]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if m&flag != 0 {
			perm |= bit
		}
	}
	return perm
}
