package main

import (
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"backup/archive"
	"backup/format"
	"backup/seal"
)

const listLong = `ARCHIVE may be a backup set's folder: its LATEST backup is listed (a damaged or missing
LATEST is an error; no other archive is picked).

Lists the entries of ARCHIVE by their stored names (a directory's ends in "/"), the names
that restore --include matches. On stderr follow the status recorded at backup and what the
backup skipped and warned about: the first 20 paths of each, as create's summary does, and
how many more (--all prints them all). list reads the archive's directory and its manifest,
not the files' data: use verify to check that.`

const listExitCodes = `0 listed, 1 the archive or its manifest cannot be read, or the list could not be
written (its reader gone, as with head -1), 2 usage, 130 interrupted.`

// listEntryJSON is one entry as list --json prints it.
type listEntryJSON struct {
	Name     string    `json:"name"`
	NameB64  string    `json:"name_b64,omitempty"` // the name's bytes when it is not UTF-8
	Type     string    `json:"type"`
	Size     uint64    `json:"size"` // as the header declares it: unsigned, as zip64's field is
	Mode     string    `json:"mode"`
	Modified time.Time `json:"mtime"`
	SHA256   string    `json:"sha256,omitempty"`
	// Target is a symlink's target as the manifest records it; TargetB64 its bytes in
	// base64 when they are not UTF-8 (Target then shows U+FFFD for each such byte).
	Target    string `json:"target,omitempty"`
	TargetB64 string `json:"target_b64,omitempty"`
}

// listJSON is what list --json prints. The lists from the manifest are null without one.
type listJSON struct {
	Archive    string            `json:"archive"`
	ArchiveB64 string            `json:"archive_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Manifest   bool              `json:"manifest"`
	Status     string            `json:"recorded_status"`
	Entries    []listEntryJSON   `json:"entries"`
	Skipped    []format.Skipped  `json:"skipped"`
	Excluded   []format.Excluded `json:"excluded"`
	Warnings   []format.Warning  `json:"warnings"`
}

// listConfig is the list command's flags.
type listConfig struct {
	json, long, all bool
	s3              *s3Flags
	rereads         int // how often the set was read again, its target gone (see superseded)
	identity        *identityFlag
	ids             *seal.Identities
}

func newListCmd() *cobra.Command {
	cmd := newCommand("list [flags] ARCHIVE", "list the entries of an archive", listLong, listExitCodes)
	var cfg listConfig
	flags := cmd.Flags()
	flags.BoolVarP(&cfg.long, "long", "l", false, "also print each entry's mode, size and mtime (UTC)")
	flags.BoolVar(&cfg.all, "all", false, "print every skipped path and warning, not only the first 20 of each")
	flags.BoolVar(&cfg.json, "json", false, "print the entries and the manifest's lists as JSON")
	cfg.identity = addIdentityFlag(flags, identityUsage)
	cfg.s3 = addS3Flags(flags)
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stderr := cmd.ErrOrStderr()
		if len(args) != 1 {
			return usageError(stderr, "list", argCount("one ARCHIVE", len(args)))
		}
		err := refuseEmpty(flags, []string{"identity"}, args, "ARCHIVE")
		if err == nil {
			cfg.ids, err = cfg.identity.load(stderr, "backup list")
		}
		if err != nil {
			return usageError(stderr, "list", err)
		}
		if err := cfg.s3.check(args[0]); err != nil {
			return usageError(stderr, "list", err)
		}
		if err := checkStdoutNotInput(cmd.OutOrStdout(), args[0], "", cfg.identity.paths); err != nil {
			return usageError(stderr, "list", err)
		}
		return listArchive(cfg, args[0], cmd.OutOrStdout(), stderr)
	})
	return cmd
}

func listArchive(cfg listConfig, arg string, stdout, stderr io.Writer) int {
	defer limitMemory()()
	ctx, stop := interruptible()
	defer stop()
	ref, err := resolveArchive(ctx, arg, cfg.s3)
	if err != nil && ctx.Err() != nil {
		return listInterrupted(stderr)
	}
	if err != nil {
		sayf(stderr, "backup list: %s\n", setError(arg, err))
		return exitFailed
	}
	defer ref.close()
	path := ref.path
	ref.ids, ref.notes = cfg.ids, true
	r, err := ref.open(ctx)
	if ref.readAgain(ctx, err, &cfg.rereads) {
		return listArchive(cfg, arg, stdout, stderr)
	}
	if err != nil && ctx.Err() != nil {
		return listInterrupted(stderr)
	}
	if isNoIdentity(err) {
		sayf(stderr, "backup list: %v\n", needIdentity(format.QuoteName(path)))
		return exitUsage
	}
	if err != nil {
		sayf(stderr, "backup list: %s: %s\n", format.QuoteName(path), cause(err).Error())
		return exitFailed
	}
	defer r.Close()
	if ctx.Err() != nil {
		return listInterrupted(stderr)
	}
	if cfg.json {
		if err := writeJSON(stdout, newListJSON(path, r)); err != nil {
			return jsonFailed(stderr, "list", err)
		}
	} else {
		for _, e := range r.Entries {
			if ctx.Err() != nil {
				return listInterrupted(stderr)
			}
			// The list is list's answer: a reader gone (| head -1) cuts it, and list stops.
			if err := writeListLine(stdout, e, r.RecordedMtime(e), cfg.long); err != nil {
				sayf(stderr, "backup list: writing to stdout: %v\n", cause(err))
				return exitFailed
			}
		}
	}
	if r.ManifestErr != nil {
		sayf(stderr, "backup list: %s: %s: %s\n", format.QuoteName(path), format.ManifestName, r.ManifestErr.Error())
		return exitFailed
	}
	if !cfg.json {
		writeManifestSummary(stderr, r, cfg.all)
	}
	return exitComplete
}

// listInterrupted ends a list that a SIGINT or SIGTERM stopped: one line and exit 130, never
// the cancelled read's error, which would say the archive could not be read (exit 1).
func listInterrupted(stderr io.Writer) int {
	fmt.Fprintln(stderr, "backup list: interrupted")
	return exitInterrupted
}

func writeListLine(w io.Writer, e *archive.Entry, mtime time.Time, long bool) error {
	if !long {
		_, err := fmt.Fprintln(w, format.QuoteName(e.StoredName()))
		return err
	}
	var target string
	if e.Target != "" {
		target = " -> " + format.QuoteName(e.Target)
	}
	_, err := fmt.Fprintf(w, "%s %12d %s %s%s\n", lsMode(e.Mode), uint64(e.Size), mtime.UTC().Format("2006-01-02 15:04:05"), format.QuoteName(e.StoredName()), target)
	return err
}

func newListJSON(path string, r *archive.Reader) listJSON {
	out := listJSON{Manifest: r.HasManifest, Entries: []listEntryJSON{}}
	out.Archive, out.ArchiveB64 = format.JSONText(path)
	for _, e := range r.Entries {
		var sum string
		if d, ok := r.RecordedSHA256(e); ok {
			sum = d.String()
		}
		entry := listEntryJSON{
			Type:     e.Type(),
			Size:     uint64(e.Size),
			Mode:     fmt.Sprintf("%04o", unixPerm(e.Mode)),
			Modified: r.RecordedMtime(e).UTC(),
			SHA256:   sum,
			Target:   e.Target,
		}
		entry.Name, entry.NameB64 = format.JSONText(e.StoredName())
		entry.Target, entry.TargetB64 = format.JSONText(e.Target)
		out.Entries = append(out.Entries, entry)
	}
	if m := r.Manifest; m != nil {
		out.Status, out.Skipped, out.Excluded, out.Warnings = m.Status, m.Skipped, m.Excluded, m.Warnings
	}
	return out
}

// writeManifestSummary tells what the manifest recorded, on stderr so that stdout stays the
// list of names.
func writeManifestSummary(w io.Writer, r *archive.Reader, all bool) {
	m := r.Manifest
	entries := format.Plural(len(r.Entries), "entry", "entries")
	if m == nil {
		fmt.Fprintf(w, "backup list: %s; no manifest: not made by backup\n", entries)
		return
	}
	fmt.Fprintf(w, "backup list: %s; status recorded at backup: %s; %d skipped, %d excluded, %s\n",
		entries, m.Status, len(m.Skipped), len(m.Excluded), format.Plural(len(m.Warnings), "warning", "warnings"))
	var skipped, warnings []string
	for _, s := range m.Skipped {
		skipped = append(skipped, fmt.Sprintf("  skipped %s (%s)", format.QuoteName(s.Path), format.EscapeText(s.Kind)))
	}
	for _, wr := range m.Warnings {
		lost := ""
		if wr.Lost {
			lost = " (lost)"
		}
		warnings = append(warnings, fmt.Sprintf("  warning %s: %s: %s%s", format.QuoteName(wr.Path), format.EscapeText(wr.Op), format.EscapeText(wr.Error), lost))
	}
	for _, lines := range [][]string{skipped, warnings} {
		if !all {
			lines = capLines(lines, "--all")
		}
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}

// lsMode is m as ls -l prints it: the type's letter, then the permissions, with s or S, and
// t or T, where setuid, setgid and sticky are set (Go's FileMode.String writes them as
// letters in front: "urwxr-xr-x", "dtrwxrwxrwx").
func lsMode(m fs.FileMode) string {
	b := []byte("-rwxrwxrwx")
	switch {
	case m.IsDir():
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m&fs.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&fs.ModeSocket != 0:
		b[0] = 's'
	case m&fs.ModeCharDevice != 0:
		b[0] = 'c'
	case m&fs.ModeDevice != 0:
		b[0] = 'b'
	case m&fs.ModeIrregular != 0:
		b[0] = '?'
	}
	for i := range 9 {
		if m.Perm()&(1<<(8-i)) == 0 {
			b[1+i] = '-'
		}
	}
	for _, s := range []struct {
		flag        fs.FileMode
		at          int
		exec, noExe byte
	}{{fs.ModeSetuid, 3, 's', 'S'}, {fs.ModeSetgid, 6, 's', 'S'}, {fs.ModeSticky, 9, 't', 'T'}} {
		if m&s.flag != 0 {
			if b[s.at] == 'x' {
				b[s.at] = s.exec
			} else {
				b[s.at] = s.noExe
			}
		}
	}
	return string(b)
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
