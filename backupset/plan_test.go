package backupset

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// history is 50 runs of one set, oldest first, from monthly runs in the autumn to hourly
// runs on the last day, with incomplete, failed and unknown runs among them. Each row says
// what Plan must do with it under historyPolicy, worked out by hand from the calendar
// (2026-02-21 is a Saturday; ISO week 8 is Feb 16–22, week 7 Feb 9–15, week 6 Feb 2–8).
// Reasons "" means deleted as not kept by any rule; "superseded" means deleted as older than
// the newest complete archive.
var history = []struct {
	started string
	state   State
	reasons string
}{
	{"2025-09-10T03:00:00Z", Complete, ""},
	{"2025-09-25T03:00:00Z", Complete, ""},
	{"2025-10-05T03:00:00Z", Complete, ""},
	{"2025-10-28T03:00:00Z", Complete, ""},
	{"2025-10-31T23:00:00Z", Incomplete, "superseded"},
	{"2025-11-10T03:00:00Z", Complete, ""},
	{"2025-11-29T03:00:00Z", Complete, "monthly #4"},
	{"2025-11-30T03:00:00Z", Failed, "superseded"},
	{"2025-12-15T03:00:00Z", Complete, ""},
	{"2025-12-31T23:30:00Z", Complete, "monthly #3"},
	{"2026-01-05T03:00:00Z", Complete, ""},
	{"2026-01-11T03:00:00Z", Complete, ""},
	{"2026-01-12T03:00:00Z", Complete, ""},
	{"2026-01-18T03:00:00Z", Complete, ""},
	{"2026-01-19T03:00:00Z", Incomplete, "superseded"},
	{"2026-01-25T03:00:00Z", Complete, ""},
	{"2026-01-31T03:00:00Z", Complete, "monthly #2"},
	{"2026-02-01T03:00:00Z", Complete, ""},
	{"2026-02-02T03:00:00Z", Complete, ""},
	{"2026-02-03T03:00:00Z", Complete, ""},
	{"2026-02-04T03:00:00Z", Complete, ""},
	{"2026-02-05T03:00:00Z", Complete, ""},
	{"2026-02-06T03:00:00Z", Complete, ""},
	{"2026-02-07T03:00:00Z", Incomplete, "superseded"},
	{"2026-02-08T03:00:00Z", Complete, "weekly #3"},
	{"2026-02-09T03:00:00Z", Complete, ""},
	{"2026-02-10T03:00:00Z", Complete, ""},
	{"2026-02-11T03:00:00Z", Complete, ""},
	{"2026-02-12T03:00:00Z", Complete, ""},
	{"2026-02-13T03:00:00Z", Complete, ""},
	{"2026-02-14T03:00:00Z", Failed, "superseded"},
	{"2026-02-15T03:00:00Z", Complete, "weekly #2"},
	{"2026-02-16T03:00:00Z", Complete, "daily #5"},
	{"2026-02-17T03:00:00Z", Unknown, "unknown, kept"},
	{"2026-02-18T03:00:00Z", Complete, "daily #4"},
	{"2026-02-19T03:00:00Z", Complete, "daily #3"},
	{"2026-02-20T03:00:00Z", Complete, "daily #2"},
	{"2026-02-21T00:00:00Z", Complete, ""},
	{"2026-02-21T01:00:00Z", Complete, ""},
	{"2026-02-21T02:00:00Z", Complete, ""},
	{"2026-02-21T03:00:00Z", Complete, ""},
	{"2026-02-21T04:00:00Z", Complete, ""},
	{"2026-02-21T05:00:00Z", Incomplete, "superseded"},
	{"2026-02-21T06:00:00Z", Complete, "hourly #4"},
	{"2026-02-21T07:00:00Z", Complete, "last #3, hourly #3"},
	{"2026-02-21T08:00:00Z", Complete, "last #2, hourly #2"},
	{"2026-02-21T09:00:00Z", Complete, "LATEST, last #1, hourly #1, daily #1, weekly #1, monthly #1, newest complete"},
	{"2026-02-21T10:00:00Z", Incomplete, "newer than the newest complete backup"},
	{"2026-02-21T11:00:00Z", Failed, "newer than the newest complete backup"},
	{"2026-02-21T12:00:00Z", Incomplete, "newer than the newest complete backup"},
}

var historyPolicy = Policy{Last: 3, Hourly: 4, Daily: 5, Weekly: 3, Monthly: 4}

func historyRuns(t *testing.T) (runs []Run, latest string) {
	t.Helper()
	for _, h := range history {
		tm, err := time.Parse(time.RFC3339, h.started)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, Run{Name: stamp("app", tm), Source: "app", Started: tm, State: h.state})
	}
	return runs, stamp("app", time.Date(2026, 2, 21, 9, 0, 0, 0, time.UTC))
}

func TestPlanHistory(t *testing.T) {
	if len(history) != 50 {
		t.Fatalf("history has %d runs, want 50", len(history))
	}
	runs, latest := historyRuns(t)
	ds := Plan(runs, latest, historyPolicy)
	kept := 0
	for i, d := range ds {
		want := history[i].reasons
		if want == "" {
			want = "not kept by any rule"
		} else if want == "superseded" {
			want = "superseded by a newer complete backup"
		}
		wantKeep := !strings.HasPrefix(want, "not kept") && !strings.HasPrefix(want, "superseded")
		if got := strings.Join(d.Reasons, ", "); d.Keep != wantKeep || got != want || d.Name != runs[i].Name {
			t.Errorf("%s (%s): keep %v (%s); want keep %v (%s)", d.Name, d.State, d.Keep, got, wantKeep, want)
		}
		if d.Keep {
			kept++
		}
	}
	if kept != 17 {
		t.Errorf("kept %d runs, want 17", kept)
	}
}

// TestPlanLocation: buckets are calendar buckets in the policy's time zone. At UTC+1 the run
// at 2025-12-31 23:30 UTC falls on January 1st, so December's newest is the 15th.
func TestPlanLocation(t *testing.T) {
	runs, latest := historyRuns(t)
	p := historyPolicy
	p.Location = time.FixedZone("UTC+1", 3600)
	changed := map[string]string{
		"app-20251231T233000Z.zip": "not kept by any rule",
		"app-20251215T030000Z.zip": "monthly #3",
	}
	for i, d := range Plan(runs, latest, p) {
		want, ok := changed[d.Name]
		if !ok {
			want = strings.Join(Plan(runs, latest, historyPolicy)[i].Reasons, ", ")
		}
		if got := strings.Join(d.Reasons, ", "); got != want {
			t.Errorf("%s: %s; want %s", d.Name, got, want)
		}
	}
}

func TestPlanRules(t *testing.T) {
	at := func(day, hour int) time.Time { return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC) }
	run := func(source string, tm time.Time, s State) Run {
		return Run{Name: stamp(source, tm), Source: source, Started: tm, State: s}
	}
	tests := []struct {
		name   string
		runs   []Run
		latest int // index of the LATEST run
		policy Policy
		keep   []int
	}{
		{"zero policy keeps newest complete and LATEST", []Run{
			run("app", at(1, 3), Complete), run("app", at(2, 3), Complete), run("app", at(3, 3), Complete),
		}, 1, Policy{}, []int{1, 2}},
		{"no complete backup yet", []Run{
			run("app", at(1, 3), Incomplete), run("app", at(2, 3), Failed), run("app", at(3, 3), Incomplete),
		}, 2, Policy{Last: 1}, []int{0, 1, 2}},
		{"activated incomplete older than newest complete", []Run{
			run("app", at(1, 3), Complete), run("app", at(2, 3), Incomplete), run("app", at(3, 3), Complete),
		}, 1, Policy{Last: 1}, []int{1, 2}},
		{"another source is never touched", []Run{
			run("db", at(1, 3), Complete), run("app", at(1, 4), Complete), run("db", at(2, 3), Incomplete), run("app", at(2, 4), Complete),
		}, 3, Policy{Last: 1}, []int{0, 2, 3}},
		{"within measures from the newest complete", []Run{
			run("app", at(1, 3), Complete), run("app", at(5, 3), Complete), run("app", at(6, 3), Complete),
			run("app", at(7, 3), Complete), run("app", at(20, 3), Failed), run("app", at(21, 3), Failed),
		}, 3, Policy{Within: 48 * time.Hour}, []int{1, 2, 3, 4, 5}},
		{"gone receipts are superseded like failed runs", []Run{
			run("app", at(1, 3), Gone), run("app", at(2, 3), Complete), run("app", at(3, 3), Gone),
		}, 1, Policy{Last: 5}, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keep []int
			for i, d := range Plan(tt.runs, tt.runs[tt.latest].Name, tt.policy) {
				if d.Keep {
					keep = append(keep, i)
				}
			}
			if !slices.Equal(keep, tt.keep) {
				t.Errorf("kept %v, want %v", keep, tt.keep)
			}
		})
	}
}
