package main

import (
	"bytes"
	"strings"
	"testing"
)

var readerWalls = map[string]float64{
	verify: 1, unzipT: 2, verifyFloor: 0.9, restore: 3, unzipO: 4.5, restoreFloor: 2.2, rulesFloor: 2.4,
}

// TestReaderFloors: the floors of verify and restore (both of restore's) follow each
// command's row in the Targets table, as shares of the same peer, and in the table of verify
// and restore.
func TestReaderFloors(t *testing.T) {
	r := reuseReport(t, readerWalls)
	var b bytes.Buffer
	r.targets(&b)
	r.readers(&b)
	doc := b.String()
	for _, c := range []struct{ command, floor string }{
		{"| `backup verify` vs `unzip -tqq`", "| the floor of `verify` (`bench/entryfloor`: inflate, CRC-32 and SHA-256 of every entry on every core, the archive's SHA-256, nothing else) vs `unzip -tqq` | none: no verify can be under it | 0.450 (0.90 s ÷ 2.00 s) | — |"},
		{"| `backup restore` vs `unzip -qo`", "| the floor of `restore` (`bench/entryfloor`: the same, and each file made exclusively with its mode and time, as `unzip` does; no temp file, no check of folders) vs `unzip -qo` | none: no restore can be under it | 0.489 (2.20 s ÷ 4.50 s) | — |"},
	} {
		if next := lineAfter(doc, c.command); next != c.floor {
			t.Errorf("after the row %q:\n%s\nwant:\n%s", c.command, next, c.floor)
		}
	}
	rules := "| the floor of `restore` (`bench/entryfloor restore-rules`: the floor above, with folders opened one at a time and watched for moves, each file made unnamed and linked to its name once the watches are quiet, and the deflate primer before each entry) vs `unzip -qo` | none: no restore keeping its rules can be under it | 0.533 (2.40 s ÷ 4.50 s) | — |"
	if next := lineAfter(doc, "| the floor of `restore` (`bench/entryfloor`:"); next != rules {
		t.Errorf("after the restore floor's row:\n%s\nwant:\n%s", next, rules)
	}
	for _, row := range []string{"| verify floor (bench/entryfloor) | 0.90 |", "| restore floor (bench/entryfloor) | 2.20 |", "| " + rulesFloor + " | 2.40 |"} {
		if !strings.Contains(doc, row) {
			t.Errorf("no row %q in the table of verify and restore:\n%s", row, doc)
		}
	}
}

// TestCreateFloor: the floor of the full run follows its row in the Targets table, as a share
// of zip's time, and is not among the tools.
func TestCreateFloor(t *testing.T) {
	r := reuseReport(t, map[string]float64{ours: 2, zipR: 10, createFloor: 1.6})
	var b bytes.Buffer
	r.targets(&b)
	r.tools(&b)
	doc := b.String()
	want := "| the floor of that run (`bench/createfloor`: read, deflate at level 6, CRC-32 and SHA-256 of every file in chunks on every core, the output's SHA-256, fsync; no zip headers, no manifest) vs `zip -r -q` | none: no run can be under it | 0.160 (1.60 s ÷ 10.00 s) | — |"
	if next := lineAfter(doc, "| default level: wall time vs `zip -r -q`"); next != want {
		t.Errorf("after the full run's row:\n%s\nwant:\n%s", next, want)
	}
	if strings.Contains(doc, "| "+createFloor+" |") {
		t.Errorf("the floor among the tools:\n%s", doc)
	}
}

// TestReaderFloorsAbsent: a run without the floors (an older report's) shows no floor row.
func TestReaderFloorsAbsent(t *testing.T) {
	walls := map[string]float64{}
	for name, wall := range readerWalls {
		if name != verifyFloor && name != restoreFloor && name != rulesFloor {
			walls[name] = wall
		}
	}
	r := reuseReport(t, walls)
	var b bytes.Buffer
	r.targets(&b)
	r.readers(&b)
	if strings.Contains(b.String(), "| the floor of") || strings.Contains(b.String(), "floor (bench/entryfloor) |") {
		t.Errorf("a floor row without a floor run:\n%s", b.String())
	}
}

// lineAfter is the line of doc after the first that starts with prefix.
func lineAfter(doc, prefix string) string {
	lines := strings.Split(doc, "\n")
	for i, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, prefix) {
			return lines[i+1]
		}
	}
	return ""
}

// TestSecondCorpus: the full run's time and size on the second corpus follow the size row
// on the first, are met or not by the same limits, and are not among the tools; without the
// second corpus there are no such rows.
func TestSecondCorpus(t *testing.T) {
	results := strings.Join([]string{
		ours + "\t1\t2\t51200\t149400000\tok\t3",
		zipR + "\t1\t10\t20000\t145000000\tok\t10",
		oursSecond + "\t1\t1.5\t51200\t117560000\tok\t2.5",
		zipSecond + "\t1\t9\t20000\t115290000\tok\t9",
	}, "\n") + "\n"
	r := loadReport(t, results, "second_files=7735", "second_bytes=290800000", "v_python=Python 3.11.7")
	var b bytes.Buffer
	r.header(&b)
	r.targets(&b)
	r.tools(&b)
	doc := b.String()
	for _, want := range []string{
		"| the second corpus (Python's standard library and random data), default level: wall time vs `zip -r -q` | ≤ 0.20 | 0.167 (1.50 s ÷ 9.00 s) | yes |",
		"| the second corpus, default level: archive size vs `zip -r -q` | ≤ 1.02 | 1.020 (117.6 MB ÷ 115.3 MB) | yes |",
		"- A second corpus, for the full run's targets only: **7735 files, 290.8 MB**",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("no %q in:\n%s", want, doc)
		}
	}
	if next := lineAfter(doc, "| default level: archive size vs `zip -r -q`"); !strings.HasPrefix(next, "| the second corpus (Python") {
		t.Errorf("after the size row: %s", next)
	}
	if strings.Contains(doc, "| "+oursSecond+" |") || strings.Contains(doc, "| "+zipSecond+" |") {
		t.Errorf("the second corpus among the tools:\n%s", doc)
	}

	r = reuseReport(t, map[string]float64{ours: 2, zipR: 10})
	b.Reset()
	r.header(&b)
	r.targets(&b)
	if strings.Contains(b.String(), "second corpus") {
		t.Errorf("second-corpus rows without the second corpus:\n%s", b.String())
	}
}

// TestMillionFileReaders: restore and list of the million files get their peak RSS rows
// after verify's, and their lines in the Scale table, when they ran; results from before
// them keep verify's row alone and no line that says they failed.
func TestMillionFileReaders(t *testing.T) {
	walls := map[string]float64{bigFile: 5, files100k: 1, files1M: 10, verify1M: 8}
	old := reuseReport(t, walls)
	walls[restore1M], walls[list1M] = 80, 20
	now := reuseReport(t, walls)
	for _, c := range []struct {
		r    *report
		rows []string
		none []string
	}{
		{old, []string{"| 1,000,000 files of 100 bytes: peak RSS of `verify` | ≤ 600 MiB | 50 MiB | yes |"}, []string{restore1M, list1M, "`restore`", "`list`"}},
		{now, []string{
			"| 1,000,000 files of 100 bytes: peak RSS of `restore` | ≤ 600 MiB | 50 MiB | yes |",
			"| 1,000,000 files of 100 bytes: peak RSS of `list` | ≤ 600 MiB | 50 MiB | yes |",
			"| " + restore1M + " | 80.00 | 80.0 | 0.0 | 120.00 | 50 |",
			"| " + list1M + " | 20.00 | 20.0 | 0.0 | 30.00 | 50 |",
		}, nil},
	} {
		var b bytes.Buffer
		c.r.targets(&b)
		c.r.scale(&b)
		doc := b.String()
		for _, row := range c.rows {
			if !strings.Contains(doc, row) {
				t.Errorf("no row %q in:\n%s", row, doc)
			}
		}
		for _, s := range c.none {
			if strings.Contains(doc, s) {
				t.Errorf("%q in a report of a bench that did not run it:\n%s", s, doc)
			}
		}
	}
}
