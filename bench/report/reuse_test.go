package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reuseReport loads a report of the reuse rows at the given wall times (seconds, one run
// each), with the meta file's lines.
func reuseReport(t *testing.T, walls map[string]float64, meta ...string) *report {
	t.Helper()
	var results strings.Builder
	for name, wall := range walls {
		fmt.Fprintf(&results, "%s\t1\t%g\t51200\t0\tok\t%g\n", name, wall, wall*1.5)
	}
	return loadReport(t, results.String(), meta...)
}

// loadReport loads a report of results (lines of results.tsv) with the meta file's lines.
func loadReport(t *testing.T, results string, meta ...string) *report {
	t.Helper()
	dir := t.TempDir()
	rp, mp := filepath.Join(dir, "results.tsv"), filepath.Join(dir, "meta.txt")
	if err := os.WriteFile(rp, []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mp, []byte(strings.Join(append(meta, "runs=1"), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := load(rp, mp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var reuseWalls = map[string]float64{
	reuseFirst: 8, reuseSecond: 0.5, reuseChanged: 1.5, reuseReread: 8,
	resticFirst: 20, resticSecond: 1, reuseFloor: 0.25,
}

// targetRows are the rows of the Targets table whose measure starts with prefix.
func targetRows(doc, prefix string) []string {
	var rows []string
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "| "+prefix) {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestReuseTargets(t *testing.T) {
	tests := []struct {
		name  string
		walls map[string]float64
		meta  []string
		want  []string // the met column of each reuse row, in order
	}{
		{"met", reuseWalls, []string{"reuse_identical=byte-identical"}, []string{"yes", "yes", "yes", "—", "yes", "yes", "—"}},
		{"slow", map[string]float64{reuseFirst: 8, reuseSecond: 1.5, reuseChanged: 2.5, resticSecond: 1},
			[]string{"reuse_identical=byte-identical", "reuse_differ=differ: a: the compressed bytes differ"},
			[]string{"**no**", "**no**", "**no**", "—", "**no**", "yes", "—"}},
		{"no restic", map[string]float64{reuseFirst: 8, reuseSecond: 0.5}, nil, []string{"yes", "—", "—", "—", "—", "yes", "—"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			reuseReport(t, tt.walls, tt.meta...).reuseTargets(&b)
			rows := targetRows(b.String(), reusePrefix)
			if len(rows) != len(tt.want) {
				t.Fatalf("%d rows, want %d:\n%s", len(rows), len(tt.want), b.String())
			}
			for i, row := range rows {
				cells := strings.Split(strings.Trim(row, "| "), " | ")
				if got := cells[len(cells)-1]; got != tt.want[i] {
					t.Errorf("row %d met = %q, want %q: %s", i, got, tt.want[i], row)
				}
			}
		})
	}
}

// TestReuseSectionHasFloor: the floor's row follows the second run's, as a share of the
// first run, and is left out when the floor did not run; the Targets table shows its share.
func TestReuseSectionHasFloor(t *testing.T) {
	row := "| floor of a second run, unchanged tree (bench/reusefloor) | 0.25 | 0.38 | 50 | 0.031 | 0.031 |"
	var b bytes.Buffer
	reuseReport(t, reuseWalls).reuse(&b)
	second := strings.Index(b.String(), "| second set run, unchanged tree |")
	if floor := strings.Index(b.String(), row+"\n"); floor < 0 || second < 0 || floor < second {
		t.Errorf("no floor row %q after the second run's:\n%s", row, b.String())
	}
	b.Reset()
	reuseReport(t, reuseWalls).reuseTargets(&b)
	if !strings.Contains(b.String(), "| none: no run can be under it | 0.031 (0.25 s ÷ 8.00 s) | — |\n") {
		t.Errorf("no floor row in the Targets table:\n%s", b.String())
	}
	walls := map[string]float64{}
	for k, v := range reuseWalls {
		if k != reuseFloor {
			walls[k] = v
		}
	}
	b.Reset()
	reuseReport(t, walls).reuse(&b)
	if strings.Contains(b.String(), "| floor of") {
		t.Errorf("a floor row without a floor run:\n%s", b.String())
	}
}

func TestReuseDifferenceIsLoud(t *testing.T) {
	var b bytes.Buffer
	reuseReport(t, reuseWalls, "reuse_differ=differ: a: the compressed bytes differ").reuse(&b)
	if !strings.Contains(b.String(), "**they differ**: a: the compressed bytes differ") {
		t.Errorf("the section does not say the archives differ:\n%s", b.String())
	}
}

const oldReport = `# Benchmarks

## Targets

| measure | target | measured | met |
| --- | --- | --- | --- |
| default level: wall time vs ` + "`zip -r -q`" + ` | ≤ 0.20 | 0.219 | **no** |
%s
## Scale

old scale table

%s## How backup goes fast

notes
`

func TestSpliceReuse(t *testing.T) {
	oldRows := "| reuse: second set run on the unchanged corpus (read-back included) vs the first run | ≤ 1/8 | 0.5 | **no** |\n"
	oldSection := "## Reuse\n\nold reuse table\n\n"
	r := reuseReport(t, reuseWalls, "reuse_identical=byte-identical")
	var rows, section bytes.Buffer
	r.reuseTargets(&rows)
	r.reuse(&section)
	want := fmt.Sprintf(oldReport, rows.String(), section.String())
	for _, tt := range []struct{ name, old string }{
		{"replaced", fmt.Sprintf(oldReport, oldRows, oldSection)},
		{"added", fmt.Sprintf(oldReport, "", "")},
		{"again", want},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := r.spliceReuse([]byte(tt.old), &b); err != nil {
				t.Fatal(err)
			}
			if b.String() != want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), want)
			}
		})
	}
}

func TestSpliceReuseNeedsTargets(t *testing.T) {
	r := reuseReport(t, reuseWalls)
	if err := r.spliceReuse([]byte("# Benchmarks\n\nnothing\n"), &bytes.Buffer{}); err == nil {
		t.Error("a report without a Targets table was accepted")
	}
}

// TestFullReportHasReuse: make bench writes the reuse rows and section, and leaves the
// reuse rows out of the table of every tool.
func TestFullReportHasReuse(t *testing.T) {
	var b bytes.Buffer
	if err := reuseReport(t, reuseWalls, "reuse_identical=byte-identical").write(&b); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	if n := len(targetRows(doc, reusePrefix)); n != 7 {
		t.Errorf("%d reuse rows in the Targets table, want 7", n)
	}
	if !strings.Contains(doc, "\n"+reuseHeading+"\n") {
		t.Error("no Reuse section")
	}
	tools := doc[strings.Index(doc, "## Every tool"):strings.Index(doc, reuseHeading)]
	if strings.Contains(tools, "restic") || strings.Contains(tools, "set run") {
		t.Errorf("reuse rows in the table of every tool:\n%s", tools)
	}
}

// TestSpliceReuseKeeps1M: -only reuse at BENCH_SCALE=0 keeps the million-file row and
// subsection of the old report; when the million files ran, theirs replace them.
func TestSpliceReuseKeeps1M(t *testing.T) {
	oldRow := "| " + rss1MMeasure + " | ≤ 600 MiB | 580 MiB (2026-11-30 10:00 UTC) | yes |\n"
	oldSub := reuse1MHeading + "\n\nold million-file table\n\n"
	old := fmt.Sprintf(oldReport, oldRow, "## Reuse\n\nold reuse table\n\n"+oldSub)
	walls1M := map[string]float64{reuseFirst1M: 100, reuseSecond1M: 20}
	for k, v := range reuseWalls {
		walls1M[k] = v
	}
	for _, tt := range []struct {
		name     string
		walls    map[string]float64
		keepsOld bool
	}{{"kept", reuseWalls, true}, {"replaced", walls1M, false}} {
		t.Run(tt.name, func(t *testing.T) {
			r := reuseReport(t, tt.walls, "reuse_identical=byte-identical", "reuse_1M_date=2026-12-01 11:00 UTC")
			var b bytes.Buffer
			if err := r.spliceReuse([]byte(old), &b); err != nil {
				t.Fatal(err)
			}
			doc := b.String()
			for _, s := range []string{oldRow, oldSub} {
				if strings.Contains(doc, s) != tt.keepsOld {
					t.Errorf("holds %q: %v, want %v:\n%s", s, !tt.keepsOld, tt.keepsOld, doc)
				}
			}
			if n := len(targetRows(doc, rss1MMeasure)); n != 1 {
				t.Errorf("%d rows of the million files, want 1:\n%s", n, doc)
			}
			if n := strings.Count(doc, reuse1MHeading); n != 1 {
				t.Errorf("%d million-file subsections, want 1:\n%s", n, doc)
			}
		})
	}
}

// TestReuseManifestsFloor: the floor with the manifests' work follows the plain floor, in
// the section and in the Targets table, and only when it ran.
func TestReuseManifestsFloor(t *testing.T) {
	walls := map[string]float64{reuseFloorMf: 0.3}
	for k, v := range reuseWalls {
		walls[k] = v
	}
	var b bytes.Buffer
	reuseReport(t, walls).reuse(&b)
	floor := "| floor of a second run, unchanged tree (bench/reusefloor) | 0.25 |"
	if next := lineAfter(b.String(), floor); !strings.HasPrefix(next, "| floor of a second run with its manifests, unchanged tree (bench/reusefloor -manifests) | 0.30 |") {
		t.Errorf("after the floor's row:\n%s\nin:\n%s", next, b.String())
	}
	b.Reset()
	reuseReport(t, walls).reuseTargets(&b)
	want := "| reuse: that floor with the manifests' work (`bench/reusefloor -manifests`: the reference's manifest inflated and parsed, a new one encoded and deflated, and inflated again at the read-back, with backup's codec), in the same place, vs the first run | none: no run that writes backup's manifests can be under it | 0.037 (0.30 s ÷ 8.00 s) | — |"
	if next := lineAfter(b.String(), "| reuse: the floor of that second run"); next != want {
		t.Errorf("after the floor's Targets row:\n%s\nwant:\n%s", next, want)
	}
	b.Reset()
	reuseReport(t, reuseWalls).reuseTargets(&b)
	reuseReport(t, reuseWalls).reuse(&b)
	if strings.Contains(b.String(), "| reuse: that floor with the manifests") || strings.Contains(b.String(), "| floor of a second run with its manifests") {
		t.Errorf("a row of the floor with the manifests without its run:\n%s", b.String())
	}
}
