package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// The manifestDecoder's reading: the next byte, and one whole JSON value copied into raw.
// Copying finds where a value ends, and stops at a syntax error only where the end would be
// lost (a number or literal); whoever decodes the value checks the rest of its syntax.

// fill reads more of the stream into buf; false at the end or on a read error (d.rerr).
func (d *manifestDecoder) fill() bool {
	if d.rerr != nil {
		return false
	}
	for range 100 {
		n, err := d.src.Read(d.buf)
		d.pos, d.end, d.rerr = 0, n, err
		if n > 0 || err != nil {
			return n > 0
		}
	}
	d.rerr = io.ErrNoProgress
	return false
}

// peek returns the next byte, without taking it.
func (d *manifestDecoder) peek() (byte, bool) {
	if d.pos == d.end && !d.fill() {
		return 0, false
	}
	return d.buf[d.pos], true
}

// nonSpace skips white space and returns the next byte, without taking it.
func (d *manifestDecoder) nonSpace() (byte, bool) {
	for {
		c, ok := d.peek()
		if !ok || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c, ok
		}
		d.pos++
	}
}

// eofError is what json.Decoder says when the stream ends inside a value.
func (d *manifestDecoder) eofError() error {
	if d.rerr == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return d.rerr
}

// partialError is eofError for a stream that ended inside the value being read, unless
// that value already breaks the syntax before its end.
func (d *manifestDecoder) partialError() error {
	var syntax *json.SyntaxError
	err := json.NewDecoder(bytes.NewReader(d.raw[d.start:])).Decode(new(any))
	if errors.As(err, &syntax) {
		return err
	}
	return d.eofError()
}

// value appends the JSON value that starts with c, the next byte, to raw.
func (d *manifestDecoder) value(c byte) error {
	d.start = len(d.raw)
	switch c {
	case '{', '[':
		return d.compound()
	case '"':
		return d.str()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	if c == '-' || isDigit(c) {
		return d.number()
	}
	return syntaxError("", c)
}

// compound appends an object or array, up to the bracket that closes it.
func (d *manifestDecoder) compound() error {
	depth := 0
	for {
		if d.pos == d.end && !d.fill() {
			return d.partialError()
		}
		chunk := d.buf[d.pos:d.end]
		i := 0
	scan:
		for ; i < len(chunk); i++ {
			switch chunk[i] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					d.raw = append(d.raw, chunk[:i+1]...)
					d.pos += i + 1
					return d.sizeError()
				}
			case '"':
				break scan
			}
		}
		d.raw = append(d.raw, chunk[:i]...)
		d.pos += i
		if err := d.sizeError(); err != nil {
			return err
		}
		if i < len(chunk) {
			if err := d.str(); err != nil {
				return err
			}
		}
	}
}

// str appends a string, up to its closing quote.
func (d *manifestDecoder) str() error {
	d.raw = append(d.raw, '"')
	d.pos++
	for {
		if d.pos == d.end && !d.fill() {
			return d.partialError()
		}
		chunk := d.buf[d.pos:d.end]
		i := 0
		for i < len(chunk) && chunk[i] != '"' && chunk[i] != '\\' {
			i++
		}
		if i == len(chunk) {
			d.raw = append(d.raw, chunk...)
			d.pos = d.end
			if err := d.sizeError(); err != nil {
				return err
			}
			continue
		}
		d.raw = append(d.raw, chunk[:i+1]...)
		d.pos += i + 1
		if chunk[i] == '"' {
			return d.sizeError()
		}
		c, ok := d.peek() // the escaped byte, which may be a quote
		if !ok {
			return d.partialError()
		}
		d.raw = append(d.raw, c)
		d.pos++
		// A string of nothing but escapes never reaches the check above.
		if err := d.sizeError(); err != nil {
			return err
		}
	}
}

// literal appends true, false or null.
func (d *manifestDecoder) literal(word string) error {
	for i := range len(word) {
		c, ok := d.peek()
		if !ok {
			return d.eofError()
		}
		if c != word[i] {
			return syntaxError(word[:i], c)
		}
		d.raw = append(d.raw, c)
		d.pos++
	}
	return nil
}

// number appends a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *manifestDecoder) number() error {
	start := len(d.raw)
	d.take("-")
	if !d.take("0") {
		if err := d.digits(start); err != nil {
			return err
		}
	}
	if d.take(".") {
		if err := d.digits(start); err != nil {
			return err
		}
	}
	if d.take("eE") {
		d.take("+-")
		return d.digits(start)
	}
	return nil
}

// take appends the next byte if it is one of set.
func (d *manifestDecoder) take(set string) bool {
	c, ok := d.peek()
	for i := range len(set) {
		if ok && c == set[i] {
			d.raw = append(d.raw, c)
			d.pos++
			return true
		}
	}
	return false
}

// digits appends one digit or more of the number that starts at raw[start:].
func (d *manifestDecoder) digits(start int) error {
	c, ok := d.peek()
	switch {
	case !ok:
		return d.eofError()
	case !isDigit(c):
		return syntaxError(string(d.raw[start:]), c)
	}
	for ok && isDigit(c) {
		d.raw = append(d.raw, c)
		d.pos++
		if err := d.sizeError(); err != nil {
			return err
		}
		c, ok = d.peek()
	}
	return nil
}

// sizeError is errRecordTooLarge once raw holds more than MaxManifestRecord bytes: each
// value is checked as it grows, so that none is held whole.
func (d *manifestDecoder) sizeError() error {
	if len(d.raw) > MaxManifestRecord {
		return errRecordTooLarge
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
