package report

import (
	"fmt"
	"io"

	"backup/format"
)

// MaxListed is how many paths of one kind a summary names before it says how many more
// there are: create's lost paths here, list's skipped paths and warnings, restore's refusals.
const MaxListed = 20

// WriteSummary writes the run's one-line summary and, unless it is complete, each lost path
// with its cause. receiptPath is named when the list is cut short; "" when there is none.
func WriteSummary(w io.Writer, rc *format.Receipt, receiptPath string) {
	if rc.Status == format.Failed {
		fmt.Fprintf(w, "backup: failed: %s\n", format.EscapeText(rc.Error))
		return
	}
	c := rc.Counts
	status := string(rc.Status)
	if rc.DryRun {
		status = "dry run, would be " + status
	}
	fmt.Fprintf(w, "backup: %s: %s", status, format.Plural(c.Files, "file", "files"))
	if c.Snapshots > 0 {
		fmt.Fprintf(w, " (%s)", format.Plural(c.Snapshots, "database snapshot", "database snapshots"))
	}
	fmt.Fprint(w, ", ")
	if c.Reused > 0 { // only when a reference was used, so that other summaries read as before
		fmt.Fprintf(w, "%d reused, ", c.Reused)
	}
	if c.Symlinks > 0 { // only with --symlinks store, so that other summaries read as before
		fmt.Fprintf(w, "%s, ", format.Plural(c.Symlinks, "symlink", "symlinks"))
	}
	// What was read from the files: a reused file's bytes were copied from the reference.
	fmt.Fprintf(w, "%s read", FormatBytes(c.Bytes-c.ReusedBytes))
	if rc.Archive != nil {
		fmt.Fprintf(w, ", archive %s", FormatBytes(rc.Archive.Size))
	}
	fmt.Fprintf(w, "; %d skipped, %d excluded, %s", c.Skipped, c.Excluded, format.Plural(c.Warnings, "warning", "warnings"))
	if rc.Archive != nil {
		fmt.Fprintf(w, " -> %s", format.QuoteName(rc.Archive.Path))
	}
	fmt.Fprintln(w)
	if rc.Status == format.Complete {
		return
	}
	listed := 0
	for _, wr := range rc.Warnings {
		if !wr.Lost {
			continue
		}
		if listed == MaxListed {
			fmt.Fprintf(w, "  and %d more%s\n", c.Lost-listed, seeReceipt(receiptPath))
			return
		}
		fmt.Fprintf(w, "  lost %s: %s: %s\n", format.QuoteName(wr.Path), wr.Op, format.EscapeText(wr.Error))
		listed++
	}
}

func seeReceipt(path string) string {
	if path == "" {
		return ""
	}
	return ", see " + format.QuoteName(path)
}

// FormatBytes renders n in binary units with one decimal, as du -h and ls -lh do.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
