package main

import (
	"fmt"
	"io"
	"strings"
)

// The rows the targets compare; their names are the ones bench.sh records.
const (
	ours      = "backup"
	oursFast  = "backup --level 1"
	zipR      = "zip -r -q"
	tarZstd   = "tar -cf - | zstd -1 -T0"
	bigFile   = "5 GiB sparse file"
	files100k = "100000 files of 100 bytes"
	files1M   = "1000000 files of 100 bytes"
	verify    = "backup verify"
	unzipT    = "unzip -tqq"
	restore   = "backup restore"
	unzipO    = "unzip -qo"
	verify1M  = "verify, 1000000 files of 100 bytes"
	list1M    = "list, 1000000 files of 100 bytes"
	restore1M = "restore, 1000000 files of 100 bytes"

	oursSecond = "backup, second corpus"
	zipSecond  = "zip -r -q, second corpus"

	createFloor  = "create floor (bench/createfloor)"
	verifyFloor  = "verify floor (bench/entryfloor)"
	restoreFloor = "restore floor (bench/entryfloor)"
	rulesFloor   = "restore floor with its rules (bench/entryfloor restore-rules)"
)

// isReader says whether name is read from the default archive, which the table of verify and
// restore shows instead of the table of every tool.
func isReader(name string) bool {
	switch name {
	case verify, unzipT, verifyFloor, restore, unzipO, restoreFloor, rulesFloor:
		return true
	}
	return false
}

const mib = 1 << 20

func (r *report) header(w io.Writer) {
	m := r.meta
	fmt.Fprintf(w, "# Benchmarks\n\nWritten by `make bench` (`bench/bench.sh`) on %s. Every number below comes from that one run: "+
		"the tools ran on the same corpus, %s times each, interleaved so that other load on the machine fell on all of them alike, each after a `sync` "+
		"(none timed while the kernel wrote out what another wrote); the tables show medians. Wall time is what a user waits; peak RSS is that of the largest process "+
		"(for a pipeline, the larger of `tar` and the compressor), from `/usr/bin/time -v`.\n\n", m["date"], m["runs"])
	fmt.Fprintf(w, "- Machine: **%s cores**, %s, %s of memory, Linux %s.\n", m["cores"], m["cpu"], m["mem"], m["kernel"])
	fmt.Fprintf(w, "- Corpus: **%s files, %.1f MB**: the Go toolchain's source tree (`$(go env GOROOT)/src`, %s) and generated files "+
		"(`bench/gencorpus`, fixed seeds): a 40 MB log, 28 MB of CSV, a 25 MB binary, 60 MB of random data and 20,000 files of under 4 KiB. "+
		"Read from the page cache (warmed first), so the disk does not decide.\n",
		m["corpus_files"], atof(m["corpus_bytes"])/1e6, m["corpus_go"])
	if m["second_files"] != "" {
		fmt.Fprintf(w, "- A second corpus, for the full run's targets only: **%s files, %.1f MB**, like the one issue 24 set them on: "+
			"the standard library of %s, its `__pycache__` folders included, and two files of 18 MB of random data (fixed seeds).\n",
			m["second_files"], atof(m["second_bytes"])/1e6, m["v_python"])
	}
	var versions []string
	for _, k := range []string{"backup", "v_zip", "v_gzip", "v_pigz", "v_zstd", "v_7z", "v_python", "v_unzip", "v_restic"} {
		if m[k] != "" {
			versions = append(versions, m[k])
		}
	}
	fmt.Fprintf(w, "- Versions: %s.\n", strings.Join(versions, "; "))
	if len(r.missing) > 0 {
		fmt.Fprintf(w, "- Not installed, so not measured: %s.\n", strings.Join(r.missing, ", "))
	}
	fmt.Fprintln(w)
}

func atof(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}

// ratio formats a/b of one measure of two rows, or says why there is none.
func (r *report) ratio(a, b string, get func(sample) float64) (float64, string) {
	ma, oka := r.median(a)
	mb, okb := r.median(b)
	switch {
	case !oka:
		return 0, "not measured (" + a + ")"
	case !okb:
		return 0, "not measured (" + b + ")"
	case get(mb) == 0:
		return 0, "n/a"
	}
	v := get(ma) / get(mb)
	return v, fmt.Sprintf("%.3f (%s ÷ %s)", v, num(get(ma)), num(get(mb)))
}

func num(v float64) string {
	if v >= 1e5 {
		return fmt.Sprintf("%.1f MB", v/1e6)
	}
	return fmt.Sprintf("%.2f s", v)
}

func wall(s sample) float64 { return s.wall }
func size(s sample) float64 { return s.size }

func (r *report) targets(w io.Writer) {
	fmt.Fprint(w, "## Targets\n\n| measure | target | measured | met |\n| --- | --- | --- | --- |\n")
	row := func(measure, target string, limit float64, v float64, text string) {
		r.targetRow(w, measure, target, limit, v, text)
	}
	v, t := r.ratio(ours, zipR, wall)
	row("default level: wall time vs `zip -r -q`", "≤ 0.20", 0.20, v, t)
	if _, ok := r.samples[createFloor]; ok {
		_, t = r.ratio(createFloor, zipR, wall)
		fmt.Fprintf(w, "| the floor of that run (`bench/createfloor`: read, deflate at level 6, CRC-32 and SHA-256 of every file in chunks on every core, the output's SHA-256, fsync; no zip headers, no manifest) vs `zip -r -q` | none: no run can be under it | %s | — |\n", t)
	}
	v, t = r.ratio(ours, zipR, size)
	row("default level: archive size vs `zip -r -q`", "≤ 1.02", 1.02, v, t)
	r.secondTargets(w)
	v, t = r.ratio(oursFast, tarZstd, wall)
	row("`--level 1`: wall time vs `tar -cf - \\| zstd -1 -T0`", "≤ 1.0", 1.0, v, t)
	for _, c := range []struct{ name, label string }{{ours, "peak RSS on the corpus"}, {bigFile, "peak RSS on a single 5 GiB (sparse) file"}} {
		v, t := r.rss(c.name)
		row(c.label, "≤ 100 MiB", 100, v, t)
	}
	v, t = r.rss(files1M)
	row("1,000,000 files of 100 bytes: peak RSS of `create -o`", "≤ 600 MiB", 600, v, t)
	for _, c := range []struct{ name, cmd string }{{verify1M, "verify"}, {restore1M, "restore"}, {list1M, "list"}} {
		if _, ok := r.samples[c.name]; ok || c.name == verify1M {
			v, t = r.rss(c.name)
			row("1,000,000 files of 100 bytes: peak RSS of `"+c.cmd+"`", "≤ 600 MiB", 600, v, t)
		}
	}
	v, t = r.perFile()
	row("1,000,000 files: time per file vs 100,000 files", "≤ 1.0", 1.0, v, t)
	if r.meta["verify"] == "pending" {
		row("`backup verify` vs `unzip -tqq` on the default archive", "≤ 1/2", 0.5, 0, "pending verify (not in this build)")
	} else {
		v, t = r.ratio(verify, unzipT, wall)
		row("`backup verify` vs `unzip -tqq` on the default archive", "≤ 1/2", 0.5, v, t)
		r.floorRow(w, "verify", "`bench/entryfloor`", verifyFloor, unzipT, "inflate, CRC-32 and SHA-256 of every entry on every core, the archive's SHA-256, nothing else")
	}
	v, t = r.ratio(restore, unzipO, wall)
	row("`backup restore` vs `unzip -qo` of the default archive into a new folder", "≤ 1/2", 0.5, v, t)
	r.floorRow(w, "restore", "`bench/entryfloor`", restoreFloor, unzipO, "the same, and each file made exclusively with its mode and time, as `unzip` does; no temp file, no check of folders")
	r.floorRow(w, "restore keeping its rules", "`bench/entryfloor restore-rules`", rulesFloor, unzipO, "the floor above, with folders opened one at a time and watched for moves, each file made unnamed and linked to its name once the watches are quiet, and the deflate primer before each entry")
	r.reuseTargets(w)
	r.sealTargets(w)
	fmt.Fprintln(w)
}

// secondTargets writes the full run's time and size rows on the second corpus, when it was
// measured.
func (r *report) secondTargets(w io.Writer) {
	if _, ok := r.samples[oursSecond]; !ok {
		return
	}
	v, t := r.ratio(oursSecond, zipSecond, wall)
	r.targetRow(w, "the second corpus (Python's standard library and random data), default level: wall time vs `zip -r -q`", "≤ 0.20", 0.20, v, t)
	v, t = r.ratio(oursSecond, zipSecond, size)
	r.targetRow(w, "the second corpus, default level: archive size vs `zip -r -q`", "≤ 1.02", 1.02, v, t)
}

func isSecond(name string) bool { return name == oursSecond || name == zipSecond }

// floorRow writes the Targets row of a floor (measured by tool) against the peer its
// command's own row is measured against; it has no target, and no row when the floor did not
// run. runs names the runs that cannot be under it, the command first: "restore", or
// "restore keeping its rules".
func (r *report) floorRow(w io.Writer, runs, tool, floor, peer, does string) {
	if _, ok := r.samples[floor]; !ok {
		return
	}
	_, t := r.ratio(floor, peer, wall)
	command, _, _ := strings.Cut(runs, " ")
	fmt.Fprintf(w, "| the floor of `%s` (%s: %s) vs `%s` | none: no %s can be under it | %s | — |\n",
		command, tool, does, peer, runs, t)
}

// targetRow writes one row of the Targets table: met when v is at most limit, unless text
// says there is no measurement.
func (r *report) targetRow(w io.Writer, measure, target string, limit float64, v float64, text string) {
	met := "—"
	if !strings.HasPrefix(text, "not") && !strings.HasPrefix(text, "pending") {
		met = yesNo(v <= limit)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", measure, target, text, met)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func (r *report) rss(name string) (float64, string) {
	m, ok := r.median(name)
	if !ok {
		return 0, "not measured"
	}
	v := m.rssKiB / 1024
	return v, fmt.Sprintf("%.0f MiB", v)
}

func (r *report) perFile() (float64, string) {
	a, oka := r.median(files1M)
	b, okb := r.median(files100k)
	if !oka || !okb {
		return 0, "not measured"
	}
	pa, pb := a.wall/1e6*1e6, b.wall/1e5*1e6 // µs per file
	return pa / pb, fmt.Sprintf("%.3f (%.1f µs ÷ %.1f µs per file)", pa/pb, pa, pb)
}

func (r *report) tools(w io.Writer) {
	fmt.Fprintf(w, "## Every tool\n\nRatios are `backup` at the default level divided by the tool: below 1 means `backup` is faster or smaller. "+
		"CPU is user + system seconds: on %s cores, CPU ÷ wall shows how much of the machine a tool kept busy.\n\n"+
		"| tool | wall s | backup ÷ tool, time | output MB | backup ÷ tool, size | CPU s | peak RSS MiB |\n| --- | --: | --: | --: | --: | --: | --: |\n", r.meta["cores"])
	base, _ := r.median(ours)
	for _, name := range r.order {
		if strings.HasPrefix(name, "level ") || name == bigFile || strings.HasSuffix(name, "files of 100 bytes") || name == createFloor || isSecond(name) || isReader(name) || isReuse(name) || isSeal(name) {
			continue
		}
		m, ok := r.median(name)
		name := strings.ReplaceAll(name, "|", `\|`)
		if !ok {
			fmt.Fprintf(w, "| %s | failed | | | | | |\n", name)
			continue
		}
		sizeMB, sizeRatio := "—", "—"
		if m.size > 0 {
			sizeMB, sizeRatio = fmt.Sprintf("%.1f", m.size/1e6), fmt.Sprintf("%.3f", base.size/m.size)
		}
		fmt.Fprintf(w, "| %s | %.2f | %.3f | %s | %s | %.2f | %.0f |\n", name, m.wall, base.wall/m.wall, sizeMB, sizeRatio, m.cpu, m.rssKiB/1024)
	}
	fmt.Fprintln(w)
}

func (r *report) levels(w io.Writer) {
	ref, ok := r.median(zipR)
	if _, has := r.samples["level 1"]; !has || !ok {
		return
	}
	fmt.Fprintf(w, "## Levels\n\n`backup create --level N` on the corpus against `zip -r -q` (zlib level 6: %.2f s, %.1f MB). "+
		"The default level is the one that fits both targets best.\n\n"+
		"| level | wall s | ÷ zip -r, time | output MB | ÷ zip -r, size | CPU s | peak RSS MiB |\n| --: | --: | --: | --: | --: | --: | --: |\n", ref.wall, ref.size/1e6)
	for level := 1; level <= 9; level++ {
		m, ok := r.median(fmt.Sprintf("level %d", level))
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %d | %.2f | %.3f | %.1f | %.3f | %.2f | %.0f |\n", level, m.wall, m.wall/ref.wall, m.size/1e6, m.size/ref.size, m.cpu, m.rssKiB/1024)
	}
	fmt.Fprintln(w)
}

func (r *report) scale(w io.Writer) {
	if _, ok := r.samples[bigFile]; !ok {
		return
	}
	fmt.Fprint(w, "## Scale\n\nAt the default level; medians as above.\n\n| case | wall s | µs per file | output MB | CPU s | peak RSS MiB |\n| --- | --: | --: | --: | --: | --: |\n")
	for _, c := range []struct {
		name  string
		files float64
	}{{bigFile, 0}, {files100k, 1e5}, {files1M, 1e6}, {verify1M, 1e6}, {restore1M, 1e6}, {list1M, 1e6}} {
		if _, ran := r.samples[c.name]; !ran && (c.name == restore1M || c.name == list1M) {
			continue // results of a bench from before these rows
		}
		m, ok := r.median(c.name)
		if !ok {
			fmt.Fprintf(w, "| %s | failed | | | | |\n", c.name)
			continue
		}
		perFile := "—"
		if c.files > 0 {
			perFile = fmt.Sprintf("%.1f", m.wall/c.files*1e6)
		}
		fmt.Fprintf(w, "| %s | %.2f | %s | %.1f | %.2f | %.0f |\n", c.name, m.wall, perFile, m.size/1e6, m.cpu, m.rssKiB/1024)
	}
	fmt.Fprintln(w)
}

// restoreTarget says where the restores wrote (see restore_one in bench.sh).
func (r *report) restoreTarget() string {
	if r.meta["restore_fs"] == "fresh" {
		return "each restore goes into a new folder on an ext4 file system made for it alone (journaled and empty, on a loop device), " +
			"because the cost of making a file depends on what the file system went through before: " +
			"on ext4 without a journal, inodes freed in the last minutes are checked on every allocation."
	}
	return "restores go into a folder that does not exist yet."
}

// readers writes the table of verify and restore against unzip on the default archive.
func (r *report) readers(w io.Writer) {
	if _, ok := r.samples[restore]; !ok {
		return
	}
	fmt.Fprint(w, "## Verify and restore\n\nThe default archive of the corpus, read by `backup`, by `unzip` and by `bench/entryfloor`; "+
		r.restoreTarget()+" Medians as above. "+
		"The floors do only what a verify or a restore cannot skip, on every core: each entry inflated by the decoder `backup` uses, "+
		"with its CRC-32 and SHA-256, and for verify the archive's SHA-256 (the check against its receipt); a restore's floor also writes each file, exclusively, with its mode and time, as `unzip` does. "+
		"The floor with restore's rules (`restore-rules`) adds what those rules cost each file, done the cheapest way: folders opened one component at a time and watched for moves, "+
		"each file made unnamed in its folder and linked to its name once the watches are quiet, and the deflate primer before each entry. "+
		"No floor parses a manifest or checks a local header before reading an entry, so no command can be under its floor.\n\n"+
		"| command | wall s | CPU s | peak RSS MiB |\n| --- | --: | --: | --: |\n")
	for _, name := range []string{verify, unzipT, verifyFloor, restore, unzipO, restoreFloor, rulesFloor} {
		m, ok := r.median(name)
		if !ok && (name == verifyFloor || name == restoreFloor || name == rulesFloor) {
			continue // a report of a run before the floors
		}
		if !ok {
			fmt.Fprintf(w, "| %s | failed | | |\n", name)
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.0f |\n", name, m.wall, m.cpu, m.rssKiB/1024)
	}
	fmt.Fprintln(w)
}
