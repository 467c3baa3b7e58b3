package report

import (
	"fmt"
	"strings"
	"time"

	"backup/format"
)

// The progress line is drawn by hand rather than by a progress-bar library: it must fit any
// terminal width from 20 columns up without wrapping (a wrapped line cannot be erased with
// \r, and every redraw then leaves a stale line), which takes choosing what to show by
// width: the library used before only shrank its bar and let the counts wrap. Tried again
// (issue 22), schollz/progressbar v3.19.1 also fills the last column (which makes some
// terminals wrap), shrinks its bar only when its writer is an *os.File on a terminal, keeps
// an empty "[ ]" at any width, puts the percentage before the bar, ends a frame with
// \x1b[0K or clears with a line of blanks, and fsyncs an *os.File after every frame (a real
// fsync with --progress always into a file): fitting it takes this file's logic all the same.

// RenderLine is the progress line for s in at most width-1 columns (the last column is left
// free: writing it makes some terminals wrap). Wider, it shows a bar, the percentage, files
// and bytes done of the total, the ETA and the current file, cut from the left to fit;
// narrower, it shortens the counts, then drops the current file, the bar, the ETA and the
// file counts, in that order. It uses printable ASCII only, so its length is its width.
func RenderLine(s Snapshot, eta time.Duration, etaKnown bool, width int) string {
	avail := max(width-1, 1)
	stats := fitFirst(statVariants(s, eta, etaKnown), avail)
	line := stats
	if rest := avail - len(stats); s.TotalBytes != nil && rest >= 13 {
		line = bar(s, min(max(rest/3, 12), 32)) + " " + stats
	}
	if rest := avail - len(line) - 1; s.Current != "" && rest >= 10 {
		line += " " + cutLeft(printable(s.Current), rest)
	}
	return line
}

// statVariants are the counts from the longest form to the shortest.
func statVariants(s Snapshot, eta time.Duration, etaKnown bool) []string {
	if s.TotalBytes == nil {
		return []string{
			fmt.Sprintf("%d files %s (counting)", s.Files, FormatBytes(s.Bytes)),
			fmt.Sprintf("%d files %s", s.Files, FormatBytes(s.Bytes)),
			fmt.Sprintf("%d %s", s.Files, shortBytes(s.Bytes)),
			shortBytes(s.Bytes),
		}
	}
	pct := percent(s)
	etaText := ""
	if etaKnown {
		etaText = " ETA " + format.FormatDuration(eta)
	}
	files := fmt.Sprintf("%d/%d", s.Files, *s.TotalFiles)
	long := fmt.Sprintf("%s/%s", FormatBytes(s.Bytes), FormatBytes(*s.TotalBytes))
	short := fmt.Sprintf("%s/%s", shortBytes(s.Bytes), shortBytes(*s.TotalBytes))
	return []string{
		fmt.Sprintf("%3d%% %s files %s%s", pct, files, long, etaText),
		fmt.Sprintf("%3d%% %s %s%s", pct, files, short, etaText),
		fmt.Sprintf("%3d%% %s%s", pct, short, etaText),
		fmt.Sprintf("%3d%% %s", pct, short),
		fmt.Sprintf("%3d%%", pct),
	}
}

// fitFirst returns the first variant that fits in width, or the last one cut to it.
func fitFirst(variants []string, width int) string {
	for _, v := range variants {
		if len(v) <= width {
			return v
		}
	}
	last := variants[len(variants)-1]
	return last[:min(len(last), width)]
}

// percent is the share of bytes done, or of files when there are no bytes to read.
func percent(s Snapshot) int {
	done, total := s.Bytes, *s.TotalBytes
	if total == 0 {
		done, total = s.Files, *s.TotalFiles
	}
	if total <= 0 {
		return 100
	}
	return int(min(100*done/total, 100))
}

// bar is [=====>    ] of width columns, brackets included.
func bar(s Snapshot, width int) string {
	inner := width - 2
	filled := percent(s) * inner / 100
	head := ""
	if filled < inner {
		head = ">"
	}
	return "[" + strings.Repeat("=", filled) + head + strings.Repeat(" ", inner-filled-len(head)) + "]"
}

// shortBytes is FormatBytes without the space and the "iB": 1.2G.
func shortBytes(n int64) string {
	return strings.TrimSuffix(strings.ReplaceAll(FormatBytes(n), " ", ""), "iB")
}

// printable replaces every byte that is not printable ASCII with '?': a name may hold
// control characters (which would move the cursor) or wide characters (two columns each).
func printable(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c < ' ' || c > '~' {
			b[i] = '?'
		}
	}
	return string(b)
}

// cutLeft keeps the end of s, the file's name, in width columns, with "..." in front when
// it had to cut.
func cutLeft(s string, width int) string {
	if len(s) <= width {
		return s
	}
	return "..." + s[len(s)-(width-3):]
}
