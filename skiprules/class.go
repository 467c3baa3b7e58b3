package skiprules

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// charClass is a bracket expression such as [a-z], [!0-9] or [[:alpha:]].
type charClass struct {
	negated bool
	ranges  []runeRange
}

// runeRange is an inclusive range of runes; a single rune has lo == hi.
type runeRange struct{ lo, hi rune }

// matches reports whether r is in the class. The caller never passes '/',
// because classes are matched within one path segment, so, as in git, a
// class can never match a slash.
func (c *charClass) matches(r rune) bool {
	in := false
	for _, rr := range c.ranges {
		if rr.lo <= r && r <= rr.hi {
			in = true
			break
		}
	}
	return in != c.negated
}

var (
	errUnterminatedClass = errors.New("unterminated [ character class")
	errUnknownClass      = errors.New("unknown [:name:] character class")
)

// posixClasses are the [:name:] classes git's wildmatch accepts. Like git
// they are ASCII-only, so a pattern means the same whatever the locale.
var posixClasses = map[string][]runeRange{
	"alnum":  {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}},
	"alpha":  {{'A', 'Z'}, {'a', 'z'}},
	"blank":  {{'\t', '\t'}, {' ', ' '}},
	"cntrl":  {{0x00, 0x1f}, {0x7f, 0x7f}},
	"digit":  {{'0', '9'}},
	"graph":  {{0x21, 0x7e}},
	"lower":  {{'a', 'z'}},
	"print":  {{0x20, 0x7e}},
	"punct":  {{0x21, 0x2f}, {0x3a, 0x40}, {0x5b, 0x60}, {0x7b, 0x7e}},
	"space":  {{'\t', '\r'}, {' ', ' '}},
	"upper":  {{'A', 'Z'}},
	"xdigit": {{'0', '9'}, {'A', 'F'}, {'a', 'f'}},
}

// parseClass parses the bracket expression that starts at p[i] == '[' and
// returns it with the index just past its closing ']'. The syntax is git's:
// '!' or '^' first negates, a ']' first is literal, '-' between two
// characters makes a range, '\' escapes, and [:name:] names a POSIX class.
func parseClass(p string, i int) (*charClass, int, error) {
	c := &charClass{}
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		c.negated = true
		j++
	}
	for first := true; ; first = false {
		if j >= len(p) {
			return nil, 0, errUnterminatedClass
		}
		if p[j] == ']' && !first {
			return c, j + 1, nil
		}
		if named, next, err := parsePosixClass(p, j); err != nil {
			return nil, 0, err
		} else if named != nil {
			c.ranges = append(c.ranges, named...)
			j = next
			continue
		}
		lo, next, ok := classRune(p, j)
		if !ok {
			return nil, 0, errUnterminatedClass
		}
		j = next
		hi := lo
		if j+1 < len(p) && p[j] == '-' && p[j+1] != ']' {
			if hi, next, ok = classRune(p, j+1); !ok {
				return nil, 0, errUnterminatedClass
			}
			j = next
		}
		c.ranges = append(c.ranges, runeRange{lo, hi})
	}
}

// parsePosixClass parses "[:name:]" at p[j]. It returns nil ranges and no
// error when p[j] does not start one; like git, a "[:" without a closing
// ":]" before the next ']' is a literal '['.
func parsePosixClass(p string, j int) ([]runeRange, int, error) {
	if !strings.HasPrefix(p[j:], "[:") {
		return nil, 0, nil
	}
	rest := p[j+2:]
	end := strings.IndexByte(rest, ']')
	if end < 1 || rest[end-1] != ':' {
		return nil, 0, nil
	}
	ranges, ok := posixClasses[rest[:end-1]]
	if !ok {
		return nil, 0, errUnknownClass
	}
	return ranges, j + 2 + end + 1, nil
}

// classRune reads one possibly escaped rune of a bracket expression at p[j]
// and returns it with the index after it; ok is false when the pattern ends
// first.
func classRune(p string, j int) (r rune, next int, ok bool) {
	if p[j] == '\\' {
		j++
		if j >= len(p) {
			return 0, 0, false
		}
	}
	r, w := utf8.DecodeRuneInString(p[j:])
	return r, j + w, true
}
