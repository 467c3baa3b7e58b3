package skiprules

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Matcher holds gitignore-syntax patterns. It is immutable once built, so
// one Matcher may be used from many goroutines.
type Matcher struct {
	patterns []pattern
}

// pattern is one compiled line.
type pattern struct {
	text     string // as written, minus ignored trailing spaces: the receipt's rule
	negate   bool   // "!pat": a match re-includes
	dirOnly  bool   // "pat/": matches directories only
	anchored bool   // a slash at the start or middle: matched from the root
	segs     []segment
}

var errEmptyPattern = errors.New("pattern matches nothing")

// errNeverComponent is the error of a pattern with an empty, "." or ".." component: a path
// below its SOURCE has none, so the pattern would match nothing.
var errNeverComponent = errors.New(`an empty, "." or ".." component never appears in a stored path, so it matches nothing (write cache, or /cache to match at the top only)`)

// ParsePatterns compiles patterns (one per element; blank lines and lines
// starting with # are ignored, trailing unescaped spaces trimmed, "\#" "\!"
// "\ " escapes). Returns an error naming the bad pattern (e.g. an
// unterminated [ class) — the caller prints it as a usage error.
//
// Besides an unterminated class, a trailing lone backslash, an unknown
// [:name:] class, and a pattern that is empty once "!" and slashes are
// removed ("!", "/"), and one with an empty, "." or ".." component ("./cache",
// "../app/x", "a//b"), are errors: git would silently match nothing, which is
// never what someone typing --exclude meant.
func ParsePatterns(patterns []string) (*Matcher, error) {
	m := &Matcher{}
	for i, line := range patterns {
		p, ok, err := parsePattern(line)
		if err != nil {
			return nil, &PatternError{Index: i, Pattern: line, Err: err}
		}
		if ok {
			m.patterns = append(m.patterns, p)
		}
	}
	return m, nil
}

// PatternError is a pattern that could not be parsed, the Index-th given to ParsePatterns,
// so that a caller can say where the user wrote it (a file's line).
type PatternError struct {
	Index   int
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("bad pattern %s: %v", QuotePattern(e.Pattern), e.Err)
}

// QuotePattern is pattern quoted for a message, cut to its first 64 bytes (and its length
// said) when longer: a line of a binary file named by --exclude-from by mistake may be a
// megabyte, and printed whole it was a 900 KB line of stderr that journald cuts.
func QuotePattern(pattern string) string {
	const max = 64
	if len(pattern) <= max {
		return fmt.Sprintf("%q", pattern)
	}
	return fmt.Sprintf("%q… (%d bytes)", pattern[:max], len(pattern))
}

func (e *PatternError) Unwrap() error { return e.Err }

// parsePattern compiles one line; ok is false for a blank or comment line.
func parsePattern(line string) (p pattern, ok bool, err error) {
	if strings.HasPrefix(line, "#") {
		return pattern{}, false, nil
	}
	line = trimTrailingSpaces(line)
	if line == "" {
		return pattern{}, false, nil
	}
	p.text = line
	body := line
	if strings.HasPrefix(body, "!") {
		p.negate = true
		body = body[1:]
	}
	if strings.HasSuffix(body, "/") {
		p.dirOnly = true
		body = body[:len(body)-1]
	}
	// Like git, any slash left (even one inside brackets) anchors.
	p.anchored = strings.Contains(body, "/")
	body = strings.TrimPrefix(body, "/")
	if body == "" {
		return pattern{}, false, errEmptyPattern
	}
	if p.segs, err = compileGlob(body); err != nil {
		return pattern{}, false, err
	}
	if slices.ContainsFunc(p.segs, neverMatches) {
		return pattern{}, false, errNeverComponent
	}
	return p, true, nil
}

// neverMatches says whether a segment can match only a component that no path below a
// SOURCE has: an empty one, "." or "..".
func neverMatches(s segment) bool {
	switch {
	case s.globstar:
		return false
	case len(s.toks) == 0:
		return true
	case len(s.toks) == 1 && s.toks[0].kind == tokLit:
		return s.toks[0].lit == "." || s.toks[0].lit == ".."
	}
	return false
}

// CheckArg refuses a pattern given as a command-line argument that gitignore syntax, made for
// the lines of a file, would read otherwise than it was typed: a blank one (no pattern), one
// starting with # (a comment: -x '#*#' for Emacs's autosave files matched nothing) and one
// whose trailing spaces would be dropped (-x 'tmp ' excluded tmp). Each error says how to
// write what was meant.
func CheckArg(pattern string) error {
	switch {
	case trimTrailingSpaces(pattern) == "":
		return errEmptyPattern
	case strings.HasPrefix(pattern, "#"):
		return errors.New(`starts with #, which makes it a comment that matches nothing: write \# for a # at the start`)
	case trimTrailingSpaces(pattern) != pattern:
		return errors.New(`ends with a space, which is dropped: write "\ " for a space at the end`)
	}
	return nil
}

// trimTrailingSpaces removes trailing spaces that are not escaped by a
// backslash, exactly as git does: "a\ " keeps its space, "a\\ " does not.
// Only spaces are trimmed, not tabs, again like git.
func trimTrailingSpaces(s string) string {
	end := len(s)
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		end = lastSpace
	}
	return s[:end]
}

// ReadPatterns reads one pattern per line (for --exclude-from); CRLF
// tolerated. A UTF-8 byte order mark at the start is dropped, as git does
// for .gitignore files written by editors that add one.
func ReadPatterns(r io.Reader) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if len(lines) == 0 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		// The scanner's own message names no line.
		return nil, fmt.Errorf("line %d: longer than 1 MiB (not a file of patterns?)", len(lines)+1)
	} else if err != nil {
		return nil, fmt.Errorf("read exclude patterns: %w", err)
	}
	return lines, nil
}

// Match reports whether rel (a slash-separated path relative to the source
// root, never empty, no leading or trailing slash) is excluded, and the
// original pattern text that decided it. A nil *Matcher matches nothing.
//
// The last matching pattern decides. When it is a negation, Match returns
// its text (with the "!") and false; when no pattern matches it returns ""
// and false.
//
// "?", "*" and classes step over UTF-8 characters, not bytes, so "?" matches
// "é"; git works on bytes and would need "??". Matching is case-sensitive.
//
// Match looks at rel alone, not at its parents: with the pattern "a/",
// Match("a/b", false) is false. That is enough because the walk never
// descends into an excluded directory, and it is why a "!" pattern cannot
// re-include a file below an excluded directory, the same limit git has.
func (m *Matcher) Match(rel string, isDir bool) (pattern string, excluded bool) {
	if m == nil || len(m.patterns) == 0 {
		return "", false
	}
	parts := strings.Split(rel, "/")
	for i := len(m.patterns) - 1; i >= 0; i-- {
		p := &m.patterns[i]
		if p.dirOnly && !isDir {
			continue
		}
		if p.matches(parts) {
			return p.text, !p.negate
		}
	}
	return "", false
}

// matches reports whether p matches the path split into parts. An
// unanchored pattern has no slash, so matching it against the base name is
// the same as matching it at any depth.
func (p *pattern) matches(parts []string) bool {
	if !p.anchored {
		parts = parts[len(parts)-1:]
	}
	return matchSegments(p.segs, parts)
}
