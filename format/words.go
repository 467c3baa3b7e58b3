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

// ShellQuote is a word as a POSIX shell reads it back: as it is when it holds only
// characters no shell treats specially, else in single quotes (each ' as '\”). A word that
// is not printable (a control byte, bytes that are not UTF-8) cannot be pasted from a
// terminal as it is, and is given in bash's $'…' form, each such byte as \xHH, so that
// nothing printed can break a line or drive a terminal.
func ShellQuote(word string) string {
	if word != "" && strings.Trim(word, shellSafe) == "" {
		return word
	}
	if printable(word) {
		return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(word); i++ {
		switch c := word[i]; {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// shellSafe are the characters a shell takes as part of a plain word anywhere in it.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"
