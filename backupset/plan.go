package backupset

import (
	"fmt"
	"slices"
	"time"

	"backup/format"
)

// Policy says which complete archives to keep. The rules combine as in restic's forget: an
// archive kept by any rule is kept. The zero Policy keeps only what is always kept (the
// LATEST target and the newest complete archive).
type Policy struct {
	Last    int // the newest N complete archives
	Hourly  int // the newest archive of each of the newest N hours that have one
	Daily   int // … days
	Weekly  int // … ISO weeks (Monday to Sunday)
	Monthly int // … calendar months
	// Within keeps every complete archive started at most this long before the newest one
	// (measured from the newest, not from now, so that a string of failed runs does not
	// shrink it).
	Within time.Duration
	// Location is the time zone of the hour, day, week and month buckets; nil means UTC.
	Location *time.Location
	// Now is the time the plan is made at; zero means time.Now(). A run dated more than a
	// clock's skew after it is kept and counted by no rule (see Plan).
	Now time.Time
}

// Run is what a retention plan needs to know of one entry of a set.
type Run struct {
	Name    string
	Source  string // the source's name at the front of Name
	Started time.Time
	State   State
	Problem error // why the run is Unknown, said in its reason; nil otherwise
}

// Decision is what a plan does with one run, and why.
type Decision struct {
	Run
	Keep    bool
	Reasons []string
	// ReceiptLeft says a prune deleted the run's archive but stopped on its receipt, which
	// is still in the set (a Gone run, which the next prune removes).
	ReceiptLeft bool
}

// Plan decides which runs to keep. It is a pure function, so that the rules can be tested
// on any history. latest is the name LATEST holds. The rules count complete archives only;
// runs that are not complete are kept when newer than the newest complete archive and
// deleted (superseded) when older. Never deleted: the LATEST target, the newest complete
// archive, an Unknown entry, any run of another source than LATEST's (all encrypted runs
// count as one source, Sealed), and a run dated in the future.
//
// A complete run that started more than a clock's skew after p.Now was made by a machine
// whose clock was wrong (create moves LATEST past it): it orders nothing, as for create and
// status. Counted, it would be the newest complete archive for as long as it is dated
// ahead, and --keep-within would count from it and delete every recent backup.
func Plan(runs []Run, latest string, p Policy) []Decision {
	source, _, _ := parseName(latest)
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	ds := make([]Decision, len(runs))
	var complete []*Decision
	for i, r := range runs {
		ds[i].Run = r
		switch {
		case r.Started.After(now.Add(skew)):
			ds[i].keep("started in the future, check the clock")
		case r.Source == source && r.State == Complete:
			complete = append(complete, &ds[i])
		}
	}
	slices.SortFunc(complete, func(a, b *Decision) int { return newerFirst(a.Run, b.Run) })
	applyRules(complete, p)
	for i := range ds {
		decideRest(&ds[i], complete, latest, source)
	}
	return ds
}

// newerFirst orders runs newest first, the reverse of Scan's order.
func newerFirst(a, b Run) int {
	return compareRuns(b.Started, b.Name, a.Started, a.Name)
}

// bucketRule is one keep rule: how many buckets it keeps and how it names a run's bucket.
type bucketRule struct {
	name   string
	count  int
	bucket func(t time.Time, i int) string
}

// applyRules marks the complete runs (newest first) that a rule keeps, with the rule's name
// and the bucket's rank: "daily #2" is the newest archive of the second newest day.
func applyRules(complete []*Decision, p Policy) {
	if len(complete) == 0 {
		return
	}
	loc := p.Location
	if loc == nil {
		loc = time.UTC
	}
	rules := []bucketRule{
		{"last", p.Last, func(_ time.Time, i int) string { return fmt.Sprint(i) }},
		{"hourly", p.Hourly, func(t time.Time, _ int) string { return t.In(loc).Format("2006-01-02 15") }},
		{"daily", p.Daily, func(t time.Time, _ int) string { return t.In(loc).Format("2006-01-02") }},
		{"weekly", p.Weekly, func(t time.Time, _ int) string {
			y, w := t.In(loc).ISOWeek()
			return fmt.Sprintf("%04d-W%02d", y, w)
		}},
		{"monthly", p.Monthly, func(t time.Time, _ int) string { return t.In(loc).Format("2006-01") }},
	}
	for _, rule := range rules {
		kept, last := 0, ""
		for i, d := range complete {
			if kept == rule.count {
				break
			}
			if key := rule.bucket(d.Started, i); i == 0 || key != last {
				last = key
				kept++
				d.keep(fmt.Sprintf("%s #%d", rule.name, kept))
			}
		}
	}
	newest := complete[0].Started
	for _, d := range complete {
		if p.Within > 0 && !d.Started.Before(newest.Add(-p.Within)) {
			d.keep("within " + format.FormatDuration(p.Within))
		}
	}
	complete[0].keep("newest complete")
}

// decideRest gives the runs the rules did not keep their decision.
func decideRest(d *Decision, complete []*Decision, latest, source string) {
	if d.Name == latest {
		d.Reasons = append([]string{"LATEST"}, d.Reasons...)
		d.Keep = true
	}
	switch {
	case d.Keep:
	case d.Source != source:
		d.keep(otherSeries(d.Source, source))
	case d.State == Unknown && d.Problem != nil:
		d.keep("unknown (" + d.Problem.Error() + "), kept")
	case d.State == Unknown:
		d.keep("unknown, kept")
	case d.State == Complete:
		d.Reasons = []string{"not kept by any rule"}
	case len(complete) == 0:
		d.keep("no complete backup yet")
	case newerFirst(d.Run, complete[0].Run) < 0:
		d.keep("newer than the newest complete backup")
	default:
		d.Reasons = []string{"superseded by a newer complete backup"}
	}
}

func (d *Decision) keep(reason string) {
	d.Keep = true
	d.Reasons = append(d.Reasons, reason)
}

// otherSeries is why a run of another series than LATEST's is kept: another source's, or an
// encrypted run in a plain set (or the reverse), which may hold any source (a set that mixes
// the two, allowed by create --allow-plaintext, keeps the runs of the other kind until they
// are removed by hand).
func otherSeries(run, latest string) string {
	switch {
	case latest == Sealed:
		return "a plaintext backup (LATEST is encrypted)"
	case run == Sealed:
		return fmt.Sprintf("an encrypted backup (LATEST is %s's, plaintext)", latest)
	}
	return fmt.Sprintf("another source's backup (LATEST is %s's)", latest)
}
