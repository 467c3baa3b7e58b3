package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"backup/backupset"
	"backup/format"
	"backup/metrics"
	"backup/pathcheck"
	"backup/report"
)

const statusLong = `Lists the backups of the set in DIR (time, status, size, files, and which one LATEST names)
and checks LATEST the way every reader does: a pointer that is damaged, or names an archive
that is missing or does not match its receipt, is an error. It never falls back to another
archive.

When LATEST is not the newest complete backup, a line says so, and why: activated by hand
(backup activate, adopt --activate) at a time that DIR/LATEST.activated records, or not
(a run whose LATEST move failed, or a LATEST edited by hand). That alone is healthy.

With --max-age, the check also requires the LATEST backup to be complete and to have started
less than DURATION ago: what a monitoring check or a wrapper script calls.`

const statusExitCodes = `0 healthy, 1 not, or its table or --json could not be written (one line on
stderr says why), 2 usage, 130 interrupted (the metrics file left as it was).`

// statusJSON is what status --json prints.
type statusJSON struct {
	Dir       string  `json:"dir"`
	DirB64    string  `json:"dir_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Latest    *string `json:"latest"`
	LatestB64 string  `json:"latest_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Healthy   bool    `json:"healthy"`
	Reason    string  `json:"reason,omitempty"`
	// NewestComplete names the newest complete backup when LATEST is not it. Its name and
	// LATEST's are UTF-8 today (each must match its receipt's archive path, which JSON
	// gives as UTF-8 text); the twins keep every --json's promise should that change.
	NewestComplete    string `json:"newest_complete,omitempty"`
	NewestCompleteB64 string `json:"newest_complete_b64,omitempty"`
	// Activated says when and how LATEST's target was chosen by hand; absent when a create
	// run chose it.
	Activated *backupset.Activation `json:"activated,omitempty"`
	Runs      []statusRunJSON       `json:"runs"`
}

type statusRunJSON struct {
	Name      string          `json:"name"`
	NameB64   string          `json:"name_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	State     backupset.State `json:"state"`
	StartedAt time.Time       `json:"started_at"`
	Size      int64           `json:"size"`
	Files     int             `json:"files"`
	Latest    bool            `json:"latest,omitempty"`
	Problem   string          `json:"problem,omitempty"`
}

func newStatusCmd() *cobra.Command {
	cmd := newCommand("status [flags] DIR", "show a backup set's backups and check the LATEST one", statusLong, statusExitCodes)
	var maxAge durationFlag
	flags := cmd.Flags()
	flags.Var(&maxAge, "max-age", "also require LATEST to be complete and younger than `DURATION` (e.g. 26h, 7d)")
	asJSON := flags.Bool("json", false, "print the set's state as JSON")
	metricsFile := flags.String("metrics-file", "", "also write the set's Prometheus metrics to `PATH` (node_exporter textfile collector)")
	s3 := addS3Flags(flags)
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		stderr := cmd.ErrOrStderr()
		err := refuseEmpty(flags, []string{"metrics-file"}, args, "DIR")
		if err == nil {
			err = refuseDash(flags, "metrics-file")
		}
		if len(args) != 1 {
			err = argCount("one DIR", len(args))
		}
		if err == nil {
			err = maxAgeErr(flags, maxAge)
		}
		if err != nil {
			return usageError(stderr, "status", err)
		}
		st, err := s3.open(cmd.Context(), args[0])
		if err == nil {
			err = checkStatusOutputs(st, *metricsFile, cmd.OutOrStdout())
		}
		if err != nil {
			return usageError(stderr, "status", err)
		}
		return showStatus(st, time.Duration(maxAge), *asJSON, *metricsFile, cmd.OutOrStdout(), stderr)
	})
	return cmd
}

// checkStatusOutputs puts --metrics-file and stdout's file through the one check: neither
// inside the set status reads, nor one the other. prune, activate and adopt, which print to
// stdout too, check it with no --metrics-file: their report appended to a file of the set.
func checkStatusOutputs(st backupset.Store, metricsFile string, stdout io.Writer) error {
	var sets []pathcheck.Arg
	if f, ok := st.(backupset.Folder); ok {
		sets = append(sets, pathcheck.Arg{What: "the backup set " + f.Dir, Path: f.Dir})
	}
	return checkReportOutputs(sets, metricsFile, stdout)
}

// checkReportOutputs checks that neither stdout's file nor --metrics-file (when given) is
// inside one of the folder sets read, nor one the other, nor the metrics file in a set.
func checkReportOutputs(sets []pathcheck.Arg, metricsFile string, stdout io.Writer) error {
	pc := pathcheck.Check{Sealed: sets}
	if out, ok := stdoutFile(stdout, "stdout"); ok {
		pc.Outputs = append(pc.Outputs, out)
	}
	if metricsFile != "" {
		pc.Outputs = append(pc.Outputs, pathcheck.Arg{What: "--metrics-file " + metricsFile, Path: metricsFile, Kind: metricsKind, File: true})
	}
	if err := pc.Err(); err != nil {
		return err
	}
	return refuseMetricsInSet(metricsFile)
}

func showStatus(st backupset.Store, maxAge time.Duration, asJSON bool, metricsFile string, stdout, stderr io.Writer) int {
	ctx, stop := interruptible()
	defer stop()
	dir := st.Location()
	s, err := backupset.ReadStatus(ctx, st)
	if ctx.Err() != nil {
		// An interrupt says nothing of the set: the metrics file keeps what the last status
		// wrote, rather than a set that "cannot be read" (healthy 0) that would fire the alert.
		fmt.Fprintln(stderr, "backup status: interrupted")
		return exitInterrupted
	}
	now := time.Now()
	if err != nil {
		// A set that cannot be read is not healthy: the metrics must stop saying it is.
		writeStatusMetrics(metricsFile, dir, nil, now, false, stderr)
		if asJSON {
			// As for a set that is not healthy: the object, with no runs, and why.
			out := statusJSON{Healthy: false, Runs: []statusRunJSON{}, Reason: err.Error()}
			out.Dir, out.DirB64 = format.JSONText(dir)
			if err := writeJSON(stdout, out); err != nil {
				return jsonFailed(stderr, "status", err)
			}
		}
		sayf(stderr, "backup status: %v\n", err)
		return exitFailed
	}
	problem := s.Check(now, maxAge)
	writeStatusMetrics(metricsFile, dir, s, now, problem == nil, stderr)
	if asJSON {
		if err := writeJSON(stdout, newStatusJSON(dir, s, problem)); err != nil {
			return jsonFailed(stderr, "status", err)
		}
	} else if err := writeStatus(stdout, s, now, maxAge, problem); err != nil {
		tableFailed(stderr, "status", err)
		if problem == nil {
			return exitFailed
		}
	}
	if problem != nil {
		sayf(stderr, "backup status: %s\n", setError(dir, problem))
		return exitFailed
	}
	return exitComplete
}

// writeStatusMetrics writes --metrics-file, if given; s is nil when the set could not be read.
func writeStatusMetrics(path, dir string, s *backupset.Status, now time.Time, healthy bool, stderr io.Writer) {
	if path == "" {
		return
	}
	err := metrics.UpdateFile(path, func(old []byte, unread error) []metrics.Gauge {
		gauges := statusGauges(dir, s, now, healthy, carried(old))
		if unread != nil && !knowsSuccess(gauges) {
			notCarried(stderr, "backup status", path, unread) // the set showed none to write instead
		}
		return gauges
	})
	if err != nil {
		sayf(stderr, "backup status: could not write metrics %s: %v\n", path, cause(err))
	}
}

// writeStatus prints one line per run, oldest first, then a verdict when the set is healthy
// (a problem goes to stderr). The error is the first write's that failed.
func writeStatus(out io.Writer, s *backupset.Status, now time.Time, maxAge time.Duration, problem error) error {
	w := &firstErrWriter{w: out}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STARTED\tSTATUS\tSIZE\tFILES\tARCHIVE")
	for _, e := range s.Entries {
		mark, note := " ", ""
		if s.Latest != nil && e.Name == s.Latest.Name {
			mark, note = "*", "  <- LATEST"
		}
		if e.Problem != nil {
			note = "  (" + format.EscapeText(e.Problem.Error()) + ")"
		}
		size, files := "-", "-"
		if e.Archive {
			size = report.FormatBytes(e.Size)
		}
		if e.Receipt != nil && e.Receipt.Archive != nil {
			files = fmt.Sprint(e.Receipt.Counts.Files)
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s%s\n", mark, e.Started().Local().Format(time.RFC3339), e.State(), size, files, format.QuoteName(e.Name), note)
	}
	tw.Flush()
	if problem != nil {
		return w.err
	}
	rc := s.Latest.Receipt
	verdict := fmt.Sprintf("LATEST %s is %s, %s", format.QuoteName(s.Latest.Name), rc.Status, ageOf(now.Sub(rc.StartedAt)))
	if maxAge > 0 {
		verdict = fmt.Sprintf("ok: %s (max %s)", verdict, format.FormatDuration(maxAge))
	}
	fmt.Fprintln(w, verdict)
	if note := latestNote(s); note != "" {
		fmt.Fprintln(w, note)
	}
	return w.err
}

// ageOf says how old a backup that started age ago is; a start in the future (the clock of
// the host that made it, or this one's, is wrong) is said as such, not as a negative age.
func ageOf(age time.Duration) string {
	if age < 0 {
		return "dated " + format.FormatDuration(-age) + " in the future: check the clock"
	}
	return format.FormatDuration(age) + " old"
}

// latestNote says why LATEST is not the newest complete backup, or that it was chosen by
// hand; "" when a create run chose the newest.
func latestNote(s *backupset.Status) string {
	// Adopting without --activate, which adopt's docs suggest, is the plain cause: named first.
	why := "not activated by hand (adopted without --activate, a run that could not move LATEST, or LATEST edited)"
	if a := s.Activation; a != nil {
		why = fmt.Sprintf("activated by hand (backup %s) at %s", format.EscapeText(a.By), a.At.Local().Format(time.RFC3339))
	}
	switch {
	case s.Newer != nil:
		return fmt.Sprintf("LATEST is not the newest complete backup (%s is newer): %s", format.QuoteName(s.Newer.Name), why)
	case s.Activation != nil:
		return "LATEST was " + why
	}
	return ""
}

func newStatusJSON(dir string, s *backupset.Status, problem error) statusJSON {
	out := statusJSON{Healthy: problem == nil, Runs: []statusRunJSON{}}
	out.Dir, out.DirB64 = format.JSONText(dir)
	if problem != nil {
		out.Reason = setError(dir, problem)
	}
	if s.Latest != nil {
		text, b64 := format.JSONText(s.Latest.Name)
		out.Latest, out.LatestB64 = &text, b64
	}
	if s.Newer != nil {
		out.NewestComplete, out.NewestCompleteB64 = format.JSONText(s.Newer.Name)
	}
	out.Activated = s.Activation
	for _, e := range s.Entries {
		r := statusRunJSON{State: e.State(), StartedAt: e.Started(), Size: e.Size,
			Latest: s.Latest != nil && e.Name == s.Latest.Name}
		r.Name, r.NameB64 = format.JSONText(e.Name)
		if e.Receipt != nil {
			r.Files = e.Receipt.Counts.Files
		}
		if e.Problem != nil {
			r.Problem = e.Problem.Error()
		}
		out.Runs = append(out.Runs, r)
	}
	return out
}
