package main

// The metrics that create and status write for node_exporter's textfile collector
// (--metrics-file). Each file holds one set's last run; every series has a set label.

import (
	"context"
	"io"
	"time"

	"backup/backupset"
	"backup/format"
	"backup/metrics"
)

// lastSuccessMetric is carried over from the file a run replaces when the run is not complete.
const lastSuccessMetric = "backup_last_success_timestamp_seconds"

const lastSuccessHelp = "When the last complete run finished, in Unix seconds; 0 if none is known."

// metricStatuses are the series of backup_last_status, one per status.
var metricStatuses = []format.Status{format.Complete, format.Incomplete, format.Failed}

// runGauges are the metrics of one run, described by its receipt: status is the run's
// outcome (complete, incomplete or failed), lastSuccess when a complete run last finished
// (0: never), took how long the run took (the receipt's times are whole seconds).
func runGauges(set string, rc *format.Receipt, status format.Status, code int, lastSuccess time.Time, took time.Duration) []metrics.Gauge {
	label := []metrics.Label{{Name: "set", Value: set}}
	one := func(name, help string, v float64) metrics.Gauge {
		return metrics.Gauge{Name: name, Help: help, Samples: []metrics.Sample{{Labels: label, Value: v}}}
	}
	var success float64
	if !lastSuccess.IsZero() {
		success = float64(lastSuccess.Unix())
	}
	var archiveBytes float64
	if rc.Archive != nil {
		archiveBytes = float64(rc.Archive.Size)
	}
	statusGauge := metrics.Gauge{Name: "backup_last_status", Help: "1 for the status of the last run (complete, incomplete or failed), 0 for the others."}
	for _, s := range metricStatuses {
		v := 0.0
		if s == status {
			v = 1
		}
		statusGauge.Samples = append(statusGauge.Samples, metrics.Sample{Labels: append(label, metrics.Label{Name: "status", Value: string(s)}), Value: v})
	}
	c := rc.Counts
	return []metrics.Gauge{
		one("backup_last_run_timestamp_seconds", "When the last run finished, in Unix seconds.", float64(rc.FinishedAt.Unix())),
		one(lastSuccessMetric, lastSuccessHelp, success),
		statusGauge,
		one("backup_last_exit_code", "The exit code of the last run.", float64(code)),
		one("backup_last_duration_seconds", "How long the last run took.", took.Seconds()),
		one("backup_files", "Files archived by the last run.", float64(c.Files)),
		one("backup_bytes", "Bytes of the files the last run archived, those copied from an earlier backup included.", float64(c.Bytes)),
		one("backup_archive_bytes", "Size of the last run's archive; 0 when it wrote none.", archiveBytes),
		one("backup_lost_paths", "Paths whose data the last run could not read (each makes it incomplete).", float64(c.Lost)),
		one("backup_skipped_paths", "Paths the last run skipped on purpose (sockets, FIFOs, devices, symlinks).", float64(c.Skipped)),
		one("backup_warnings", "Warnings of the last run, lost data or not.", float64(c.Warnings)),
	}
}

// writeMetrics writes the run's metrics, keeping the last success of the file it replaces
// when this run is not complete.
func (c *creation) writeMetrics(rc *format.Receipt, code int, stderr io.Writer) error {
	status := format.Status(outcome(code))
	if status != format.Complete && status != format.Incomplete {
		status = format.Failed // interrupted: the run failed
	}
	took := time.Since(c.started)
	if c.succeeded(rc, code) {
		return metrics.WriteFile(c.cfg.metricsFile, runGauges(c.setDir(), rc, status, code, rc.FinishedAt, took))
	}
	// Carried from the very file replaced: a run that found the set locked writes while the
	// run holding it may write too, and must not put back the success before that run's.
	return metrics.UpdateFile(c.cfg.metricsFile, func(old []byte, unread error) []metrics.Gauge {
		success := carried(old)
		if unread != nil {
			notCarried(stderr, "backup", c.cfg.metricsFile, unread)
		} else if success.IsZero() {
			success = c.setSuccess()
		}
		return runGauges(c.setDir(), rc, status, code, success, took)
	})
}

// setSuccess is when the backup LATEST names finished, when it is complete; zero outside a
// set, or when the set shows none. A run that has no last success to carry (the first with
// --metrics-file on a set backed up for months, which failed or found the set locked) wrote
// 0, and the alert on the age of the last success paged over last night's good backup. The
// read is bounded: an interrupted run, or a bucket that stalls, must not hold the run up.
func (c *creation) setSuccess() time.Time {
	if c.cfg.set == nil {
		return time.Time{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), setSuccessTimeout)
	defer cancel()
	e, err := backupset.Latest(ctx, c.cfg.set.store)
	// A backup dated ahead (its machine's clock was wrong) is no success to date the age
	// alert by: each run after this one carries the value on, and the alert could not fire
	// until that date.
	if err != nil || e.Receipt == nil || e.State() != backupset.Complete || e.Ahead(time.Now()) {
		return time.Time{}
	}
	return e.Receipt.FinishedAt
}

// setSuccessTimeout bounds setSuccess's two small reads.
const setSuccessTimeout = 10 * time.Second

// notCarried says that the last success of the metrics file at path, which could not be
// read, is lost: it is written as 0, unknown, so that the alert on its age fires rather
// than go quiet, and this line tells the operator why.
func notCarried(stderr io.Writer, prefix, path string, unread error) {
	sayf(stderr, "%s: metrics %s: the last success it held cannot be carried over (%v); written as 0, unknown\n", prefix, path, unread)
}

// succeeded says whether the run leaves a new complete backup in place: in a set, one that
// LATEST names, even when the prune after it failed (exit 1): the age alert must not fire
// while fresh backups are there.
func (c *creation) succeeded(rc *format.Receipt, code int) bool {
	if rc.Status != format.Complete {
		return false
	}
	if c.cfg.set != nil {
		return c.latestMoved
	}
	return code == exitComplete
}

// carried is the last success a metrics file's data records; zero when none.
func carried(data []byte) time.Time {
	if v, ok := metrics.Value(data, lastSuccessMetric); ok && v > 0 {
		return time.Unix(int64(v), 0)
	}
	return time.Time{}
}

// statusGauges are what status writes: the newest run's metrics, as create wrote them (its
// exit code is not known and left out), plus the set's own. s is nil when the set could not
// be read. The last success is the newest complete backup's, else carried (what the file
// being replaced said): a set that shows none, or cannot be read, must not make the last
// success vanish, or the alert on its age would go quiet.
func statusGauges(dir string, s *backupset.Status, now time.Time, healthy bool, carried time.Time) []metrics.Gauge {
	var newest *format.Receipt
	var lastSuccess time.Time
	archives := 0
	if s == nil {
		s = &backupset.Status{}
	}
	for _, e := range s.Entries {
		if e.Archive {
			archives++
		}
		// A run dated ahead of now (its machine's clock was wrong) is not the last run, and
		// its finish no success to date the age alert by: counted, it would hold both alerts
		// quiet until that date, while no backup is made.
		if e.Receipt == nil || e.Ahead(now) {
			continue
		}
		newest = e.Receipt
		if e.State() == backupset.Complete {
			lastSuccess = e.Receipt.FinishedAt
		}
	}
	if lastSuccess.IsZero() {
		lastSuccess = carried
	}
	label := []metrics.Label{{Name: "set", Value: dir}}
	var gauges []metrics.Gauge
	if newest == nil {
		// Written even when no success is known (0, as create writes it): a set that never
		// had a backup is what the alert on its age is for.
		success := 0.0
		if !lastSuccess.IsZero() {
			success = float64(lastSuccess.Unix())
		}
		gauges = append(gauges, metrics.Gauge{Name: lastSuccessMetric, Help: lastSuccessHelp,
			Samples: []metrics.Sample{{Labels: label, Value: success}}})
	}
	if newest != nil {
		for _, g := range runGauges(dir, newest, newest.Status, 0, lastSuccess, newest.FinishedAt.Sub(newest.StartedAt)) {
			if g.Name != "backup_last_exit_code" {
				gauges = append(gauges, g)
			}
		}
	}
	set := func(name, help string, v float64) {
		gauges = append(gauges, metrics.Gauge{Name: name, Help: help, Samples: []metrics.Sample{{Labels: label, Value: v}}})
	}
	set("backup_set_archives", "Archives in the backup set.", float64(archives))
	if s.Latest != nil && s.Latest.Receipt != nil {
		set("backup_set_latest_age_seconds", "Age of the backup LATEST names, from its start.", now.Sub(s.Latest.Receipt.StartedAt).Seconds())
	}
	healthyValue := 0.0
	if healthy {
		healthyValue = 1
	}
	set("backup_set_healthy", "1 when backup status found the set healthy (with --max-age, also fresh and complete).", healthyValue)
	return gauges
}

// knowsSuccess says whether gauges give a last success.
func knowsSuccess(gauges []metrics.Gauge) bool {
	for _, g := range gauges {
		if g.Name == lastSuccessMetric && len(g.Samples) > 0 && g.Samples[0].Value > 0 {
			return true
		}
	}
	return false
}
