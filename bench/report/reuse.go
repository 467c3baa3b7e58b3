package main

import (
	"fmt"
	"io"
	"strings"
)

// The rows of the reuse benchmarks (issue 10), as bench/reuse.sh names them. Every name and
// every Targets measure of theirs starts with reusePrefix: that is how -only reuse finds
// them in an existing report.
const (
	reusePrefix    = "reuse: "
	reuseFirst     = "reuse: first set run (full)"
	reuseSecond    = "reuse: second set run, unchanged tree"
	reuseReread    = "reuse: second set run, --reread"
	reuseChanged   = "reuse: second set run, 1% of files changed"
	reuseFloor     = "reuse: floor of a second run, unchanged tree (bench/reusefloor)"
	reuseFloorMf   = "reuse: floor of a second run with its manifests, unchanged tree (bench/reusefloor -manifests)"
	resticFirst    = "reuse: restic backup, first snapshot"
	resticSecond   = "reuse: restic backup, second snapshot"
	reuseFirst1M   = "reuse: 1,000,000 files, first set run (full)"
	reuseSecond1M  = "reuse: 1,000,000 files, second set run, unchanged"
	reuseHeading   = "## Reuse"
	reuse1MHeading = "### At 1,000,000 files"
	// rss1MMeasure is the Targets row that -only reuse keeps when the million files did not run.
	rss1MMeasure = "reuse: 1,000,000 files of 100 bytes: peak RSS of a reusing set run (read-back included)"
)

func isReuse(name string) bool { return strings.HasPrefix(name, reusePrefix) }

// reuseTargets writes issue 10's rows of the Targets table.
func (r *report) reuseTargets(w io.Writer) {
	v, t := r.ratio(reuseSecond, reuseFirst, wall)
	r.targetRow(w, "reuse: second set run on the unchanged corpus (read-back included) vs the first run", "≤ 1/8 (0.125)", 1.0/8, v, t)
	v, t = r.ratio(reuseSecond, resticSecond, wall)
	r.targetRow(w, "reuse: the same second run vs `restic backup`'s second snapshot of the tree", "≤ 1.0", 1.0, v, t)
	v, t = r.ratio(reuseChanged, reuseFirst, wall)
	r.targetRow(w, "reuse: second set run with 1% of files changed vs the first run", "≤ 1/5 (0.2)", 1.0/5, v, t)
	_, t = r.ratio(reuseFloor, reuseFirst, wall)
	fmt.Fprintf(w, "| reuse: the floor of that second run (`bench/reusefloor`: its reads, writes and digests, no manifest), in the same place, vs the first run | none: no run can be under it | %s | — |\n", t)
	if _, ok := r.samples[reuseFloorMf]; ok {
		_, t = r.ratio(reuseFloorMf, reuseFirst, wall)
		fmt.Fprintf(w, "| reuse: that floor with the manifests' work (`bench/reusefloor -manifests`: the reference's manifest inflated and parsed, a new one encoded and deflated, and inflated again at the read-back, with backup's codec), in the same place, vs the first run | none: no run that writes backup's manifests can be under it | %s | — |\n", t)
	}
	same, met := r.identity()
	fmt.Fprintf(w, "| reuse: archive of the second run vs a `--reread` run's | byte-identical (except manifest timestamps) | %s | %s |\n", same, met)
	v, t = r.rss(reuseSecond)
	r.targetRow(w, "reuse: peak RSS of the second run on the corpus", "≤ 100 MiB", 100, v, t)
	v, t = r.rss(reuseSecond1M)
	if r.has1M() {
		t += " (" + r.meta["reuse_1M_date"] + ")"
	}
	r.targetRow(w, rss1MMeasure, "≤ 600 MiB", 600, v, t)
}

// identity is what bench/zipsame said of the second run's archive against the --reread
// run's: any difference in any repetition wins.
func (r *report) identity() (text, met string) {
	if d := r.meta["reuse_differ"]; d != "" {
		return "**they differ**: " + strings.TrimPrefix(d, "differ: "), "**no**"
	}
	if s := r.meta["reuse_identical"]; s != "" {
		return s, "yes"
	}
	return "not measured", "—"
}

// reuse writes the section of the reuse benchmarks, when there are any.
func (r *report) reuse(w io.Writer) {
	if _, ok := r.samples[reuseFirst]; !ok {
		return
	}
	m := r.meta
	fmt.Fprintf(w, "%s\n\nA backup set's second run copies the entries of unchanged files from the archive `LATEST` names "+
		"(issue 10). Measured by `bench/bench.sh` (`BENCH_ONLY=reuse` runs only this) on %s, at commit %s, %s runs of each case interleaved, medians; "+
		"load average %s before, %s after. Each run starts from the same state: a first run from an empty set, "+
		"a second run from a set holding one full backup of its tree (what a run adds is removed before the next). "+
		"Every set run includes the read-back before `LATEST` moves. The 1%% change: %s files, every 100th in sorted order, "+
		"each with a line appended (new size and mtime), in a copy of the corpus whose set holds a backup made before the change. "+
		"%s backs up the same tree into a new local repository, then again (its second snapshot has the first as parent). "+
		"The floor (`bench/reusefloor`, run right after a first set run of its own, as the second run is) does only what an unchanged run cannot skip, on both cores: "+
		"the reference's SHA-256 beside a stat of every path, a copy of its bytes into a new file with their SHA-256, "+
		"an fsync and a keyed read-back; it parses and writes no manifest, so no run can be under it. "+
		"The floor with the manifests (`-manifests`, after a first set run of its own too) also does their work with backup's format and codec, each beside the phase where a run does it: "+
		"the reference's manifest inflated and parsed beside the reference's SHA-256, a new one deflated at the run's level 2 beside the copy, inflated again beside the read-back. "+
		"On a busy machine the CPU column says more than the wall time.\n\n",
		reuseHeading, m["reuse_date"], orName(m["commit"], "(not recorded)"), m["runs"], m["reuse_load_before"], m["reuse_load_after"], m["reuse_changed_files"], orName(m["v_restic"], "restic"))
	fmt.Fprint(w, "| case | wall s | CPU s | peak RSS MiB | ÷ first run, wall | ÷ first run, CPU |\n| --- | --: | --: | --: | --: | --: |\n")
	for _, c := range []struct{ name, first string }{
		{reuseFirst, reuseFirst}, {reuseSecond, reuseFirst}, {reuseFloor, reuseFirst}, {reuseFloorMf, reuseFirst}, {reuseChanged, reuseFirst}, {reuseReread, reuseFirst},
		{resticFirst, resticFirst}, {resticSecond, resticFirst},
	} {
		r.reuseRow(w, c.name, c.first)
	}
	same, _ := r.identity()
	fmt.Fprintf(w, "\nFiles reused (from the receipts): the second run %s, the 1%% run %s, the `--reread` run %s. "+
		"The second run's archive against the `--reread` run's (`bench/zipsame`): %s.\n\n",
		orNone(m["reuse_reused"]), orNone(m["reuse_changed_reused"]), orNone(m["reuse_reread_reused"]), same)
	r.reuse1M(w)
}

// reuse1M writes the subsection of the million-file runs, when they ran (BENCH_SCALE=1).
// It comes last in the section, so that -only reuse at BENCH_SCALE=0 can keep the old one.
func (r *report) reuse1M(w io.Writer) {
	if !r.has1M() {
		return
	}
	m := r.meta
	fmt.Fprintf(w, "%s\n\nA set's first and second runs on 1,000,000 files of 100 bytes (`bench/gencorpus -files`), once each, "+
		"on %s, at commit %s, load average %s before.\n\n", reuse1MHeading, m["reuse_1M_date"], orName(m["reuse_1M_commit"], "(not recorded)"), m["reuse_1M_load_before"])
	fmt.Fprint(w, "| case | wall s | CPU s | peak RSS MiB | ÷ first run, wall | ÷ first run, CPU |\n| --- | --: | --: | --: | --: | --: |\n")
	r.reuseRow(w, reuseFirst1M, reuseFirst1M)
	r.reuseRow(w, reuseSecond1M, reuseFirst1M)
	fmt.Fprintf(w, "\nFiles reused by the second run: %s.\n\n", orNone(m["reuse_1M_reused"]))
}

func (r *report) has1M() bool {
	_, ok := r.samples[reuseSecond1M]
	return ok
}

func (r *report) reuseRow(w io.Writer, name, first string) {
	if _, ok := r.samples[name]; !ok {
		return
	}
	label := strings.TrimPrefix(name, reusePrefix)
	m, ok := r.median(name)
	if !ok {
		fmt.Fprintf(w, "| %s | failed | | | | |\n", label)
		return
	}
	wallRatio, cpuRatio := "—", "—"
	if f, ok := r.median(first); ok && name != first && f.wall > 0 && f.cpu > 0 {
		wallRatio, cpuRatio = fmt.Sprintf("%.3f", m.wall/f.wall), fmt.Sprintf("%.3f", m.cpu/f.cpu)
	}
	fmt.Fprintf(w, "| %s | %.2f | %.2f | %.0f | %s | %s |\n", label, m.wall, m.cpu, m.rssKiB/1024, wallRatio, cpuRatio)
}

func orNone(s string) string { return orName(s, "not recorded") }

func orName(s, name string) string {
	if s == "" {
		return name
	}
	return s
}
