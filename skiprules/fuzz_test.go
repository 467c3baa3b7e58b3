package skiprules

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// FuzzMatch checks that Match never panics, finishes, and agrees
// with a reference built on Go's linear-time regexp engine. The reference
// shares the parser, so it checks the matching engines and anchoring; the
// parser is checked by the tables and by TestMatchAgreesWithGit. Seeds are
// in testdata/fuzz/FuzzMatch.
func FuzzMatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		if len(pattern) > 256 || len(rel) > 1024 {
			t.Skip("longer inputs only slow the fuzzer down")
		}
		rel = cleanRel(rel)
		if rel == "" {
			return
		}
		m, err := ParsePatterns([]string{pattern})
		if err != nil {
			return
		}
		for _, isDir := range []bool{false, true} {
			pat, excl := m.Match(rel, isDir)
			if excl && pat == "" {
				t.Errorf("Match(%q, %v) excluded with no pattern", rel, isDir)
			}
		}
		for i := range m.patterns {
			checkAgainstReference(t, &m.patterns[i], rel)
		}
	})
}

// cleanRel turns arbitrary fuzz input into a path Match accepts: no empty
// segments and no leading or trailing slash.
func cleanRel(s string) string {
	var parts []string
	for part := range strings.SplitSeq(s, "/") {
		if part != "" {
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, "/")
}

func checkAgainstReference(t *testing.T, p *pattern, rel string) {
	t.Helper()
	re, err := regexp.Compile(referenceRegexp(p))
	if err != nil {
		// Only a pattern that is not valid UTF-8 gets here; regexp
		// refuses those, so there is no reference to compare with.
		return
	}
	got := p.matches(strings.Split(rel, "/"))
	if want := re.MatchString(rel + "/"); got != want {
		t.Errorf("pattern %q on %q: matches %v, reference %s says %v", p.text, rel, got, re, want)
	}
}

// referenceRegexp translates a compiled pattern into a regexp matched
// against rel+"/": every segment becomes "SEG/" and a globstar "([^/]*/)*",
// which needs no special cases for where the globstar stands.
func referenceRegexp(p *pattern) string {
	var b strings.Builder
	b.WriteString("^")
	if !p.anchored {
		b.WriteString("(?:[^/]*/)*")
	}
	for _, s := range p.segs {
		if s.globstar {
			b.WriteString("(?:[^/]*/)*")
			continue
		}
		for _, tok := range s.toks {
			b.WriteString(tokenRegexp(tok))
		}
		b.WriteString("/")
	}
	b.WriteString("$")
	return b.String()
}

func tokenRegexp(tok token) string {
	switch tok.kind {
	case tokLit:
		return regexp.QuoteMeta(tok.lit)
	case tokAny:
		return "[^/]"
	case tokStar:
		return "[^/]*"
	case tokClass:
		return classRegexp(tok.class)
	}
	panic(fmt.Sprintf("unknown token kind %d", tok.kind))
}

// classRegexp writes c as a regexp class that, like c, never matches '/'.
func classRegexp(c *charClass) string {
	var b strings.Builder
	for _, r := range c.ranges {
		for _, part := range splitAround(r, '/') {
			fmt.Fprintf(&b, `\x{%x}-\x{%x}`, part.lo, part.hi)
		}
	}
	switch {
	case c.negated:
		return "[^/" + b.String() + "]"
	case b.Len() == 0:
		return `[^\x00-\x{10ffff}]` // matches nothing
	default:
		return "[" + b.String() + "]"
	}
}

// splitAround returns r without x, as zero, one or two non-empty ranges.
func splitAround(r runeRange, x rune) []runeRange {
	if r.lo > r.hi {
		return nil
	}
	if x < r.lo || x > r.hi {
		return []runeRange{r}
	}
	var out []runeRange
	if r.lo < x {
		out = append(out, runeRange{r.lo, x - 1})
	}
	if x < r.hi {
		out = append(out, runeRange{x + 1, r.hi})
	}
	return out
}

// TestMatchPathological runs inputs that take exponential time in a naive
// backtracking matcher: longer than the age of the universe at these sizes, so
// a regression shows as this test never finishing (go test's timeout), with no
// clock in the assertion. Here they take microseconds.
func TestMatchPathological(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		rel     string
	}{
		{"many stars", strings.Repeat("*a", 60) + "b", strings.Repeat("a", 5000)},
		{"many globstars", strings.Repeat("**/a/", 40) + "b", strings.Repeat("a/", 2000) + "c"},
		{"stars and globstars", strings.Repeat("**/*a*/", 30) + "b", strings.Repeat("xa/", 1000) + "c"},
		{"many questions", strings.Repeat("?", 100) + "*b", strings.Repeat("é", 5000)},
		{"many classes", strings.Repeat("*[a-c]", 50) + "d", strings.Repeat("b", 5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParsePatterns([]string{tt.pattern})
			if err != nil {
				t.Fatal(err)
			}
			pat, excl := m.Match(tt.rel, false)
			if excl {
				t.Errorf("Match = (%q, true), want no match", pat)
			}
		})
	}
}
