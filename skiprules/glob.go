package skiprules

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// A glob is compiled into segments, one per slash-separated part of the
// pattern, and matched against the slash-separated parts of a path. Working
// per segment makes "* and ? never match /" hold by construction, and lets
// "**" be a segment-level wildcard.

// tokKind is the kind of one token of a segment.
type tokKind uint8

const (
	tokLit   tokKind = iota // literal bytes
	tokAny                  // ?: one rune
	tokStar                 // *: any run of runes, possibly empty
	tokClass                // [...]: one rune in the class
)

// token is one element of a segment glob.
type token struct {
	kind  tokKind
	lit   string     // for tokLit
	class *charClass // for tokClass
}

// segment matches one path segment, or, when globstar, zero or more whole
// segments.
type segment struct {
	globstar bool
	toks     []token
}

var errTrailingBackslash = errors.New("trailing backslash escapes nothing")

// compileGlob compiles a pattern body (negation, leading and trailing slash
// already removed) into segments. A segment written as two or more
// unescaped stars and nothing else is a globstar; elsewhere "**" is "*",
// as in git. A globstar at the end is rewritten as "one segment, then zero or
// more", because git's "a/**" matches what is inside a, not a itself.
func compileGlob(body string) ([]segment, error) {
	var segs []segment
	for _, raw := range splitUnescaped(body) {
		if len(raw) >= 2 && strings.Trim(raw, "*") == "" {
			segs = append(segs, segment{globstar: true})
			continue
		}
		toks, err := compileSegment(raw)
		if err != nil {
			return nil, err
		}
		segs = append(segs, segment{toks: toks})
	}
	if last := len(segs) - 1; segs[last].globstar {
		anyOne := segment{toks: []token{{kind: tokStar}}}
		segs = append(segs[:last], anyOne, segment{globstar: true})
	}
	return segs, nil
}

// splitUnescaped splits a pattern at each '/' that is neither escaped nor
// inside a bracket expression. An escaped slash also splits, because in git
// "\/" matches a slash, and a slash only ever separates segments.
func splitUnescaped(p string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && p[i+1] == '/' {
				parts = append(parts, p[start:i])
				start = i + 2
			}
			i++
		case '[':
			if _, next, err := parseClass(p, i); err == nil {
				i = next - 1
			}
		case '/':
			parts = append(parts, p[start:i])
			start = i + 1
		}
	}
	return append(parts, p[start:])
}

// compileSegment compiles the glob of one segment, which holds no separator.
func compileSegment(s string) ([]token, error) {
	var toks []token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, token{kind: tokLit, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			if i+1 >= len(s) {
				return nil, errTrailingBackslash
			}
			lit.WriteByte(s[i+1])
			i += 2
		case '*':
			flush()
			// Consecutive stars mean the same as one; folding them
			// keeps matching cost independent of how many were written.
			if n := len(toks); n == 0 || toks[n-1].kind != tokStar {
				toks = append(toks, token{kind: tokStar})
			}
			i++
		case '?':
			flush()
			toks = append(toks, token{kind: tokAny})
			i++
		case '[':
			flush()
			c, next, err := parseClass(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokClass, class: c})
			i = next
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return toks, nil
}

// matchSegment reports whether toks match all of s. It is the classic
// wildcard matcher that backtracks only to the most recent star: a later
// star can absorb anything an earlier one could, so earlier choices never
// need revisiting, and the cost is O(len(toks) * len(s)).
func matchSegment(toks []token, s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			if toks[ti].kind == tokStar {
				starT, starS = ti, si
				ti++
				continue
			}
			if n, ok := matchToken(&toks[ti], s[si:]); ok {
				ti, si = ti+1, si+n
				continue
			}
		} else if si == len(s) {
			return true
		}
		if starT < 0 || starS == len(s) {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		ti, si = starT+1, starS
	}
}

// matchToken matches one non-star token at the start of s and returns how
// many bytes it consumed.
func matchToken(t *token, s string) (int, bool) {
	switch t.kind {
	case tokLit:
		return len(t.lit), strings.HasPrefix(s, t.lit)
	case tokAny:
		if s == "" {
			return 0, false
		}
		_, w := utf8.DecodeRuneInString(s)
		return w, true
	case tokClass:
		if s == "" {
			return 0, false
		}
		r, w := utf8.DecodeRuneInString(s)
		return w, t.class.matches(r)
	}
	return 0, false
}

// matchSegments reports whether segs match all of parts. It is matchSegment
// one level up: a globstar is a star over whole segments, and every other
// segment matches exactly one part, so the same single backtrack point is
// enough and the cost stays polynomial.
func matchSegments(segs []segment, parts []string) bool {
	gi, pi := 0, 0
	starG, starP := -1, 0
	for {
		if gi < len(segs) {
			if segs[gi].globstar {
				starG, starP = gi, pi
				gi++
				continue
			}
			if pi < len(parts) && matchSegment(segs[gi].toks, parts[pi]) {
				gi, pi = gi+1, pi+1
				continue
			}
		} else if pi == len(parts) {
			return true
		}
		if starG < 0 || starP == len(parts) {
			return false
		}
		starP++
		gi, pi = starG+1, starP
	}
}
