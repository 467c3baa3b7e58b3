package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// spliceReuse writes old, an existing report, with its reuse rows of the Targets table and
// its Reuse section replaced by those of r; everything else stays as it was. When the
// million files did not run (BENCH_SCALE=0), their row and subsection stay as they were.
func (r *report) spliceReuse(old []byte, w io.Writer) error {
	var rows, section bytes.Buffer
	r.reuseTargets(&rows)
	r.reuse(&section)
	lines := strings.SplitAfter(string(old), "\n")
	newRows := strings.SplitAfter(rows.String(), "\n")
	if !r.has1M() {
		newRows = keepOldRow(lines, newRows, rss1MMeasure)
		section.WriteString(strings.Join(old1M(lines), ""))
	}
	lines, err := spliceRows(lines, newRows, reusePrefix)
	if err != nil {
		return err
	}
	lines = spliceSection(lines, section.String(), reuseHeading)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
	}
	return bw.Flush()
}

// spliceSeal writes old with its encryption rows of the Targets table and its Encryption
// section replaced by those of r, as spliceReuse does for reuse.
func (r *report) spliceSeal(old []byte, w io.Writer) error {
	var rows, section bytes.Buffer
	r.sealTargets(&rows)
	r.seal(&section)
	lines, err := spliceRows(strings.SplitAfter(string(old), "\n"), strings.SplitAfter(rows.String(), "\n"), sealPrefix)
	if err != nil {
		return err
	}
	lines = spliceSection(lines, section.String(), sealHeading)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
	}
	return bw.Flush()
}

// spliceRows puts rows at the end of the Targets table in place of its old rows whose
// measure starts with prefix.
func spliceRows(lines, rows []string, prefix string) ([]string, error) {
	start := index(lines, 0, func(l string) bool { return strings.TrimSpace(l) == "## Targets" })
	if start < 0 {
		return nil, fmt.Errorf("no Targets table to put the %q rows in", prefix)
	}
	var out []string
	i := start
	for ; i < len(lines) && (i == start || !strings.HasPrefix(lines[i], "|")); i++ {
		out = append(out, lines[i])
	}
	for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		if !strings.HasPrefix(lines[i], "| "+prefix) {
			out = append(out, lines[i])
		}
	}
	for _, row := range rows {
		if row != "" {
			out = append(out, row)
		}
	}
	return append(append(append([]string{}, lines[:start]...), out...), lines[i:]...), nil
}

// spliceSection replaces the section under heading, or puts it before the profile and the
// notes.
func spliceSection(lines []string, section, heading string) []string {
	startsWith := func(h string) func(string) bool {
		return func(l string) bool { return strings.HasPrefix(l, h) }
	}
	start := index(lines, 0, func(l string) bool { return strings.TrimSpace(l) == heading })
	end := start
	if start >= 0 {
		if end = index(lines, start+1, startsWith("## ")); end < 0 {
			end = len(lines)
		}
	} else {
		for _, h := range []string{"## Where the time goes", "## How backup goes fast"} {
			if start = index(lines, 0, startsWith(h)); start >= 0 {
				break
			}
		}
		if start < 0 {
			start = len(lines)
		}
		end = start
	}
	out := append(append([]string{}, lines[:start]...), section)
	return append(out, lines[end:]...)
}

func index(lines []string, from int, match func(string) bool) int {
	for i := from; i < len(lines); i++ {
		if match(lines[i]) {
			return i
		}
	}
	return -1
}

// keepOldRow puts the row of lines whose measure is measure in place of the new one.
func keepOldRow(lines, rows []string, measure string) []string {
	prefix := "| " + measure + " |"
	i := index(lines, 0, func(l string) bool { return strings.HasPrefix(l, prefix) })
	if i < 0 {
		return rows
	}
	out := append([]string{}, rows...)
	if j := index(out, 0, func(l string) bool { return strings.HasPrefix(l, prefix) }); j >= 0 {
		out[j] = lines[i]
	}
	return out
}

// old1M is the million-file subsection of lines' Reuse section: from its heading to the
// section's end.
func old1M(lines []string) []string {
	start := index(lines, 0, func(l string) bool { return strings.TrimSpace(l) == reuse1MHeading })
	if start < 0 {
		return nil
	}
	end := index(lines, start+1, func(l string) bool { return strings.HasPrefix(l, "## ") })
	if end < 0 {
		end = len(lines)
	}
	return lines[start:end]
}
