package main

// What backup sets prints of each set: the table, --json and --metrics-file.

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"backup/backupset"
	"backup/format"
	"backup/metrics"
	"backup/report"
)

// health is the verdict on a set, worst first in the order below; the values are --json's.
type health string

const (
	healthDamaged    health = "damaged"    // LATEST cannot be trusted
	healthUnreadable health = "unreadable" // this user may not read LATEST or its receipt: nothing is known
	healthMissing    health = "missing"    // no LATEST: no backup yet, or the pointer was lost
	healthClock      health = "clock"      // LATEST started in the future
	healthStale      health = "stale"      // older than --max-age
	healthIncomplete health = "incomplete" // LATEST is incomplete, with --max-age
	healthOK         health = "ok"
)

var healthOrder = []health{healthDamaged, healthUnreadable, healthMissing, healthClock, healthStale, healthIncomplete, healthOK}

// setRow is one set as backup sets shows it.
type setRow struct {
	loc     string
	folder  bool // a folder set, whose location is a path
	ov      backupset.Overview
	age     time.Duration // LATEST's, from its start; 0 without a LATEST
	health  health
	problem error // why the set is not healthy; nil when it is
}

// newSetRow judges a set at now: as backup status --max-age judges one (Status.Check).
// pointer says whether the listing showed a LATEST.
func newSetRow(loc string, ov backupset.Overview, pointer bool, now time.Time, maxAge time.Duration) setRow {
	r := setRow{loc: loc, ov: ov, health: healthOK}
	s := backupset.Status{Latest: ov.Latest, LatestErr: ov.LatestErr}
	r.problem = s.Check(now, maxAge)
	if ov.Latest != nil {
		r.age = now.Sub(ov.Latest.Receipt.StartedAt)
	}
	switch {
	case r.problem == nil:
	case errors.Is(ov.LatestErr, backupset.ErrNoBackup) || ov.LatestErr != nil && !pointer:
		r.health = healthMissing
	case errors.Is(ov.LatestErr, fs.ErrPermission):
		// Another user's set (root's receipts are 0600): a monitoring account that may not
		// read it learns nothing of its health, which "damaged" would claim to know.
		r.health = healthUnreadable
	case ov.LatestErr != nil:
		r.health = healthDamaged
	case ov.Latest.Receipt.Status != format.Complete:
		r.health = healthIncomplete
	case r.age < 0:
		r.health = healthClock
	default:
		r.health = healthStale
	}
	return r
}

// sortSets puts the worst first: by health, then the oldest LATEST, then by location.
func sortSets(rows []setRow) {
	slices.SortFunc(rows, func(a, b setRow) int {
		if c := cmp.Compare(slices.Index(healthOrder, a.health), slices.Index(healthOrder, b.health)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.age, a.age); c != 0 {
			return c
		}
		return strings.Compare(a.loc, b.loc)
	})
}

// reason says why the set is not healthy, in one line that names the set: text from the
// set's files (a name LATEST holds) and the set's own name (a folder's may hold any byte)
// are escaped, so that no set can forge a line.
func (r setRow) reason() string {
	var le *backupset.LatestError
	msg := setError(r.loc, r.problem)
	if !errors.As(r.problem, &le) && !errors.Is(r.problem, backupset.ErrNoBackup) {
		msg = r.loc + ": " + msg
	}
	return format.EscapeText(msg)
}

// sources names what the set backs up: the sources LATEST's receipt records, else the
// source name its archives carry; none for an encrypted set, whose receipts and names tell
// no one (the table says "(encrypted)").
func (r setRow) sources() []string {
	l := r.ov.Latest
	switch {
	case l == nil || l.Source == backupset.Sealed:
		return nil
	case len(l.Receipt.Sources) > 0:
		return l.Receipt.Sources
	}
	return []string{l.Source}
}

// writeSets prints the table, one line per set. The error is the first write's that failed.
func writeSets(out io.Writer, rows []setRow) error {
	w := &firstErrWriter{w: out}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HEALTH\tAGE\tSTATUS\tSIZE\tRUNS\tSOURCE\tSET")
	for _, r := range rows {
		age, status, size, source := "-", "-", "-", "-"
		if l := r.ov.Latest; l != nil {
			age = format.FormatDuration(r.age.Round(time.Second))
			if r.age < 0 {
				age = "-" + format.FormatDuration(-r.age.Round(time.Second))
			}
			status, size = string(l.Receipt.Status), report.FormatBytes(l.Size)
			quoted := make([]string, 0, len(r.sources()))
			for _, s := range r.sources() {
				quoted = append(quoted, format.QuoteName(s))
			}
			source = strings.Join(quoted, ",")
			if l.Source == backupset.Sealed {
				source = "(encrypted)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.health, age, status, size, r.ov.Runs, source, format.QuoteName(r.loc))
	}
	tw.Flush()
	return w.err
}

// setJSON is one element of the array backup sets --json prints.
type setJSON struct {
	Set     string `json:"set"`
	SetB64  string `json:"set_b64,omitempty"` // its bytes in base64 when it is not UTF-8
	Health  health `json:"health"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
	Runs    int    `json:"runs"`
	// The backup LATEST names; absent without one.
	Latest     *string        `json:"latest"`
	Status     format.Status  `json:"status,omitempty"`
	StartedAt  *time.Time     `json:"started_at,omitempty"`
	AgeSeconds *int64         `json:"age_seconds,omitempty"`
	Size       *int64         `json:"size,omitempty"`
	Sources    []string       `json:"sources"`
	Counts     *format.Counts `json:"counts,omitempty"`
}

func setsJSON(rows []setRow) []setJSON {
	out := make([]setJSON, 0, len(rows))
	for _, r := range rows {
		j := setJSON{Health: r.health, Healthy: r.problem == nil, Runs: r.ov.Runs, Sources: r.sources()}
		j.Set, j.SetB64 = format.JSONText(r.loc)
		if r.problem != nil {
			j.Reason = r.reason()
		}
		if j.Sources == nil {
			j.Sources = []string{}
		}
		if l := r.ov.Latest; l != nil {
			age := int64(r.age / time.Second)
			j.Latest, j.Status, j.StartedAt, j.AgeSeconds, j.Size, j.Counts = &l.Name, l.Receipt.Status, &l.Receipt.StartedAt, &age, &l.Size, &l.Receipt.Counts
		}
		out = append(out, j)
	}
	return out
}

// writeSetsMetrics writes --metrics-file, if given: one series per set of each gauge, and
// whether the location could be listed at all (listed false: rows is nil, and the file
// says only that, so that an alert on it fires rather than every set's series vanishing
// quietly), and whole (see setsGauges).
func writeSetsMetrics(path string, rows []setRow, listed, whole bool, stderr io.Writer) {
	if path == "" {
		return
	}
	if err := metrics.WriteFile(path, setsGauges(rows, listed, whole)); err != nil {
		sayf(stderr, "backup sets: could not write metrics %s: %v\n", path, cause(err))
	}
}

// listed says the location could be listed, whole that every folder below it could be too.
// A folder that could not be listed hides the sets in it, whose series would simply vanish
// (no alert fires on a series that is not there): backup_sets_listed is then 0 as well, and
// the sets found elsewhere still follow.
func setsGauges(rows []setRow, listed, whole bool) []metrics.Gauge {
	gauges := []metrics.Gauge{
		{Name: "backup_sets_listed", Help: "1 when backup sets could list the location and every folder below it, 0 when not (and when the location itself could not be, no set's series follow).",
			Samples: []metrics.Sample{{Value: b2f(listed && whole)}}},
	}
	if !listed {
		return gauges
	}
	gauges = append(gauges, metrics.Gauge{Name: "backup_sets_found", Help: "Backup sets found in the location.", Samples: []metrics.Sample{{Value: float64(len(rows))}}})
	healthy := metrics.Gauge{Name: "backup_set_healthy", Help: "1 when the set is healthy (LATEST trusted; with --max-age, also fresh and complete)."}
	runs := metrics.Gauge{Name: "backup_set_runs", Help: "Runs the set's listing shows."}
	age := metrics.Gauge{Name: "backup_set_latest_age_seconds", Help: "Age of the backup LATEST names, from its start."}
	size := metrics.Gauge{Name: "backup_set_latest_bytes", Help: "Size of the archive LATEST names."}
	complete := metrics.Gauge{Name: "backup_set_latest_complete", Help: "1 when the backup LATEST names is complete, 0 when incomplete."}
	for _, r := range rows {
		label := []metrics.Label{{Name: "set", Value: r.loc}}
		healthy.Samples = append(healthy.Samples, metrics.Sample{Labels: label, Value: b2f(r.problem == nil)})
		runs.Samples = append(runs.Samples, metrics.Sample{Labels: label, Value: float64(r.ov.Runs)})
		if l := r.ov.Latest; l != nil {
			age.Samples = append(age.Samples, metrics.Sample{Labels: label, Value: r.age.Seconds()})
			size.Samples = append(size.Samples, metrics.Sample{Labels: label, Value: float64(l.Size)})
			complete.Samples = append(complete.Samples, metrics.Sample{Labels: label, Value: b2f(l.Receipt.Status == format.Complete)})
		}
	}
	for _, g := range []metrics.Gauge{healthy, runs, age, size, complete} {
		if len(g.Samples) > 0 {
			gauges = append(gauges, g)
		}
	}
	return gauges
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
