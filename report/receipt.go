package report

import (
	"slices"
	"strings"
	"time"

	"backup/format"
)

// Run is what a receipt says about the run itself, beside what the Recorder collected.
type Run struct {
	ToolVersion string
	Started     time.Time
	Finished    time.Time
	DryRun      bool
	Sources     []string
	Archive     *format.ArchiveInfo // nil when no archive was written
	Err         error               // the fatal error; the status is then failed
	Hooks       []format.Hook       // what the --exec-before hooks did
	// WouldSnapshot is, in a dry run, the files that would be stored as snapshots.
	WouldSnapshot []format.WouldCopy
}

// Receipt renders the receipt of run from what r collected.
func (r *Recorder) Receipt(run Run) *format.Receipt {
	m, counts := r.snapshot(false)
	rc := &format.Receipt{
		Schema:      format.ReceiptSchema,
		Status:      format.Status(m.Status),
		ToolVersion: run.ToolVersion,
		StartedAt:   run.Started.UTC().Truncate(time.Second),
		FinishedAt:  run.Finished.UTC().Truncate(time.Second),
		DryRun:      run.DryRun,
		Sources:     run.Sources,
		Archive:     run.Archive,
		Counts:      counts,
		Skipped:     m.Skipped,
		Excluded:    m.Excluded,
		Warnings:    m.Warnings,
		Hooks:       run.Hooks,
	}
	if run.DryRun && len(run.WouldSnapshot) > 0 {
		rc.WouldSnapshot = slices.SortedFunc(slices.Values(run.WouldSnapshot), func(a, b format.WouldCopy) int {
			return strings.Compare(a.Path, b.Path)
		})
	}
	if run.Err != nil {
		rc.Status = format.Failed
		rc.Error = run.Err.Error()
	}
	return rc
}
