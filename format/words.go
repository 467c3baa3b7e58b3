package format

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Plural says "1 problem", "2 problems": every count the tool prints goes through it.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// QuoteName is a name (of an entry, a path, a file) as a terminal or a log line shows it:
// as it is when every byte of it is printable, else quoted as Go's %q does ("a\nb",
// "\x1b[2J", "bad\xff"), so that no name can break a line, forge one or drive a terminal.
// A name that begins with a quote is quoted too, so that a quoted name means one thing.
// Every name the tool prints for people goes through it; JSON gives names as they are.
func QuoteName(name string) string {
	if printable(name) && !strings.HasPrefix(name, `"`) {
		return name
	}
	return Quote(name)
}

// EscapeText is text from elsewhere (a reason, an error, which may hold a name) with each
// byte that is not printable escaped as %q does, without quotes around it.
func EscapeText(s string) string {
	if printable(s) {
		return s
	}
	q := Quote(s)
	return q[1 : len(q)-1]
}

// Quote is s in quotes as Go's %q gives it, except that U+FFFD is escaped too (\ufffd), so
// that what it gives is printable: printable counts U+FFFD out, since in text decoded from
// JSON it stands for bytes that were not UTF-8, and a U+FFFD left in a quoted name made each
// later escape of the line double its backslashes. For a name quoted whatever it holds.
func Quote(s string) string {
	return strings.ReplaceAll(strconv.Quote(s), "\uFFFD", `\ufffd`)
}

// printable reports whether s is UTF-8 of printable characters only (the space included).
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
