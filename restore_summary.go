package main

import (
	"fmt"
	"io"
	"strings"

	"backup/archive"
	"backup/format"
	"backup/report"
	"backup/restore"
)

func writeRefusal(w io.Writer, r *archive.Reader, plan *restore.Plan, force bool) {
	var lines []string
	for _, p := range plan.Refused {
		lines = append(lines, p.String())
	}
	lines = capLines(lines, "--json")
	var why []string
	if n := len(plan.Refused); n > 0 {
		why = append(why, format.Plural(n, "entry", "entries")+" unsafe or impossible")
	}
	if n := len(plan.Conflicts); n > 0 && !force {
		// A path the archive lists as created (it is a before-state) is not replaced but
		// removed by --force: the user is told which before choosing.
		created := map[string]bool{}
		if r.Manifest != nil {
			for _, c := range r.Manifest.Created {
				created[c.Path] = true
			}
		}
		var conflicts []string
		for _, name := range plan.Conflicts {
			what := "use --force to replace it"
			if created[name] {
				what = "the archive records it as created by a restore it undoes: --force removes it"
			}
			conflicts = append(conflicts, format.QuoteName(name)+": exists in the destination ("+what+")")
		}
		lines = append(lines, capLines(conflicts, "--json")...)
		why = append(why, format.Plural(n, "file exists", "files exist"))
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "backup restore: refused, nothing written: %s\n", strings.Join(why, ", "))
}

func writeRestoreSummary(w io.Writer, cfg restoreConfig, r *archive.Reader, out *restoreJSON, err error) {
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "%s: not created (a %s entry)\n", format.QuoteName(s.Path), s.Kind)
	}
	for _, p := range out.Damaged {
		fmt.Fprintf(w, "%s (not restored)\n", p)
	}
	for _, p := range out.Failed {
		fmt.Fprintf(w, "%s (not restored)\n", p)
	}
	for _, p := range out.Warnings {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	// DEST may be half changed when the run stops early: the way back is said then too.
	defer writeUndoLine(w, cfg, out)
	switch {
	case out.Status == restoreInterrupted:
		fmt.Fprintf(w, "backup restore: %s\n", interruptedAfter(out))
		return
	case out.Status == restoreFailed && err != nil:
		fmt.Fprintf(w, "backup restore: failed: %s\n", format.EscapeText(err.Error()))
	case out.Status == restoreFailed && len(out.Damaged) > 0:
		fmt.Fprintf(w, "backup restore: failed: %s could not be read (listed above), not restored; ", format.Plural(len(out.Damaged), "entry", "entries"))
	default:
		fmt.Fprintf(w, "backup restore: %s: ", out.Status)
	}
	if err != nil {
		return
	}
	fmt.Fprintf(w, "%s, %s, ", format.Plural(out.Files, "file", "files"), format.Plural(out.Dirs, "dir", "dirs"))
	if out.Symlinks > 0 {
		fmt.Fprintf(w, "%s, ", format.Plural(out.Symlinks, "symlink", "symlinks"))
	}
	fmt.Fprintf(w, "%s restored to %s", report.FormatBytes(out.Bytes), format.QuoteName(cfg.dest))
	if out.AlreadyPresent > 0 {
		fmt.Fprintf(w, ", %s already there", format.Plural(out.AlreadyPresent, "file", "files"))
	}
	if out.Removed > 0 {
		fmt.Fprintf(w, ", %s created by the restore undone removed", format.Plural(out.Removed, "path", "paths"))
	}
	if r.Manifest != nil {
		fmt.Fprintf(w, " (status recorded at backup: %s)", r.Manifest.Status)
	} else {
		fmt.Fprint(w, " (no manifest: checked by CRC-32 only)")
	}
	fmt.Fprintln(w)
}

// interruptedAfter says what a restore an interrupt stopped had done: the files in place,
// and the paths an undo removed.
func interruptedAfter(out *restoreJSON) string {
	done := format.Plural(out.Files, "file", "files")
	if out.Removed > 0 {
		done += ", " + format.Plural(out.Removed, "path", "paths") + " created by the restore undone removed"
	}
	return "interrupted after " + done + "; no partial file left"
}

// writeUndoLine says where the before-state of a restore --force went, and how to undo it.
func writeUndoLine(w io.Writer, cfg restoreConfig, out *restoreJSON) {
	if out.Undo != nil {
		args := append([]string{"--force"}, out.Undo.Flags...)
		// DEST by its absolute path, as the before-state: the undo is run later, maybe from
		// another folder, where a relative DEST names another folder.
		dest := cfg.dest
		if abs, err := absPath(dest); err == nil {
			dest = abs
		}
		if strings.HasPrefix(out.Undo.Archive, "-") || strings.HasPrefix(dest, "-") {
			args = append(args, "--")
		}
		for _, operand := range []string{out.Undo.Archive, dest} {
			args = append(args, format.ShellQuote(operand))
		}
		fmt.Fprintf(w, "backup restore: before-state saved in %s (undo: backup restore %s)\n", format.QuoteName(out.Undo.Archive), strings.Join(args, " "))
	}
}
