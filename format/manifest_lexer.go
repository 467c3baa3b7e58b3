package format

import (
	"math"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// lexer reads the values of one record. Each method takes a value (and the white space
// after it) and sets what it points to, or says no and sets nothing.
type lexer struct {
	b []byte
	i int
	// The owner's names of the record before: most records repeat them, and then share
	// the string instead of holding a copy each.
	user, group string
	// metas is room for the owner records of the files to come, made a slab at a time and
	// touched (see touchPages): one allocation per record, into fresh memory the collector
	// may have read, took copy-on-write faults (90 samples at 8 kHz of a restore's start,
	// for 31,484 records).
	metas []Meta
}

// newMeta returns a zero Meta for a file's record.
func (l *lexer) newMeta() *Meta {
	if len(l.metas) == 0 {
		l.metas = make([]Meta, metaSlab)
		touchPages(l.metas)
	}
	m := &l.metas[0]
	l.metas = l.metas[1:]
	return m
}

// metaSlab is how many owner records are made at once: 10 KiB, little held for nothing when
// a manifest ends or a reader keeps only some records.
const metaSlab = 128

func (l *lexer) space() bool {
	for l.i < len(l.b) && (l.b[l.i] == ' ' || l.b[l.i] == '\n' || l.b[l.i] == '\t' || l.b[l.i] == '\r') {
		l.i++
	}
	return true
}

// byte takes c and the space after it.
func (l *lexer) byte(c byte) bool {
	l.space()
	if l.i < len(l.b) && l.b[l.i] == c {
		l.i++
		return l.space()
	}
	return false
}

// key takes a key that needs no unescaping, and the space after it.
func (l *lexer) key() ([]byte, bool) {
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		return nil, false
	}
	start := l.i + 1
	for i := start; i < len(l.b); i++ {
		switch c := l.b[i]; {
		case c == '"':
			l.i = i + 1
			return l.b[start:i], l.space()
		case c < ' ' || c == '\\' || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

func (l *lexer) str(s *string) bool {
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		return false
	}
	start, ascii := l.i+1, true
	for i := start; i < len(l.b); i++ {
		switch c := l.b[i]; {
		case c == '"':
			if !ascii && !utf8.Valid(l.b[start:i]) {
				return l.unquote(s, start)
			}
			*s = string(l.b[start:i])
			l.i = i + 1
			return l.space()
		case c < ' ':
			return false
		case c == '\\':
			return l.unquote(s, start)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return false
}

// repeated is str for a value that is often the same as last, the one before.
func (l *lexer) repeated(s, last *string) bool {
	if n := len(*last); len(l.b)-l.i >= n+2 && l.b[l.i] == '"' && l.b[l.i+1+n] == '"' && string(l.b[l.i+1:l.i+1+n]) == *last {
		*s = *last
		l.i += n + 2
		return l.space()
	}
	if !l.str(s) {
		return false
	}
	*last = *s
	return true
}

// unquote reads the string from b[start:] on as encoding/json does: escapes, surrogate
// pairs, and U+FFFD for an unpaired surrogate or a byte that is not UTF-8.
func (l *lexer) unquote(s *string, start int) bool {
	// Room for the string's JSON, not for the rest of b: a record of many short escaped
	// strings would take room for all of it again for each.
	end := start
	for end < len(l.b) && l.b[end] != '"' {
		if l.b[end] == '\\' {
			end++
		}
		end++
	}
	out := make([]byte, 0, min(end, len(l.b))-start)
	for i := start; i < len(l.b); {
		switch c := l.b[i]; {
		case c == '"':
			*s = string(out)
			l.i = i + 1
			return l.space()
		case c < ' ':
			return false
		case c == '\\':
			r, n := unescape(l.b[i:])
			if n == 0 {
				return false
			}
			out = utf8.AppendRune(out, r)
			i += n
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(l.b[i:])
			out = utf8.AppendRune(out, r)
			i += n
		}
	}
	return false
}

// unescape reads the escape at the start of b: the rune, and how many bytes it took (0 when
// it is not one JSON allows).
func unescape(b []byte) (rune, int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(b)
		if r < 0 {
			return 0, 0
		}
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if r2 := hex4(b[6:]); r2 >= 0 {
			if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
				return pair, 12
			}
		}
		return unicode.ReplacementChar, 6
	}
	return 0, 0
}

// hex4 reads the escape \uXXXX at the start of b; -1 if there is none.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// digest takes 64 lowercase hex digits in quotes.
func (l *lexer) digest(d *Digest) bool {
	const n = 2 * len(Digest{})
	if len(l.b)-l.i < n+2 || l.b[l.i] != '"' || l.b[l.i+1+n] != '"' {
		return false
	}
	var v Digest
	text := l.b[l.i+1 : l.i+1+n]
	for i := range v {
		hi, lo := lowerHex[text[2*i]], lowerHex[text[2*i+1]]
		if hi|lo > 0xf {
			return false
		}
		v[i] = hi<<4 | lo
	}
	*d = v
	l.i += n + 2
	return l.space()
}

// lowerHex holds the value of each lowercase hex digit, and 0xff for any other byte.
var lowerHex = func() (t [256]byte) {
	for i := range t {
		switch {
		case '0' <= i && i <= '9':
			t[i] = byte(i - '0')
		case 'a' <= i && i <= 'f':
			t[i] = byte(i - 'a' + 10)
		default:
			t[i] = 0xff
		}
	}
	return t
}()

// digits takes the digits of an integer that encoding/json would read into a Go integer as
// it is (no fraction, no exponent, no leading zero), at most max of them.
func (l *lexer) digits(max int) (uint64, bool) {
	start := l.i
	var v uint64
	for l.i < len(l.b) && isDigit(l.b[l.i]) {
		v = v*10 + uint64(l.b[l.i]-'0')
		l.i++
	}
	n := l.i - start
	if n == 0 || n > max || (n > 1 && l.b[start] == '0') {
		return 0, false
	}
	if l.i < len(l.b) && (l.b[l.i] == '.' || l.b[l.i] == 'e' || l.b[l.i] == 'E') {
		return 0, false
	}
	return v, l.space()
}

// int takes an integer that fits in an int64.
func (l *lexer) int(p *int64) bool {
	neg := l.i < len(l.b) && l.b[l.i] == '-'
	if neg {
		l.i++
	}
	v, ok := l.digits(19)
	switch {
	case !ok || v > math.MaxInt64+1 || (v == math.MaxInt64+1 && !neg):
		return false
	case neg:
		*p = -int64(v)
	default:
		*p = int64(v)
	}
	return true
}

// boolean takes true or false. What may follow is the record's to say: a comma or a brace.
func (l *lexer) boolean(p *bool) bool {
	for _, word := range [...]string{"true", "false"} {
		if end := l.i + len(word); end <= len(l.b) && string(l.b[l.i:end]) == word {
			*p = word == "true"
			l.i = end
			return l.space()
		}
	}
	return false
}

// uint takes an unsigned integer of up to 19 digits.
func (l *lexer) uint(p *uint64) bool {
	v, ok := l.digits(19)
	if ok {
		*p = v
	}
	return ok
}

func (l *lexer) uint32(p *uint32) bool {
	v, ok := l.digits(10)
	if !ok || v > math.MaxUint32 {
		return false
	}
	*p = uint32(v)
	return true
}
