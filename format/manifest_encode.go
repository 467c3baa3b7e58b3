package format

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The records of the files and dirs, appended as json.Marshal(record) writes them, without
// reflection: WriteTo spent most of its time there. The tests hold them to json.Marshal
// byte for byte.

// appendFileRecord appends f's record (fileJSON).
func appendFileRecord(b []byte, f *File) ([]byte, error) {
	b = appendPath(append(b, '{'), "path", f.Path)
	b = strconv.AppendInt(appendKey(b, "size"), f.Size, 10)
	b = appendDigest(appendKey(b, "sha256"), &f.SHA256)
	if f.Link != 0 {
		b = strconv.AppendInt(appendKey(b, "link"), int64(f.Link), 10)
	}
	if f.Snapshot != nil {
		// Rare (database snapshots), and it holds a time: left to encoding/json.
		s, err := json.Marshal(f.Snapshot)
		if err != nil {
			return nil, err
		}
		b = append(appendKey(b, "snapshot"), s...)
	}
	if f.RawSHA256 != nil && !f.RawSHA256.IsZero() {
		b = appendDigest(appendKey(b, "raw_sha256"), f.RawSHA256)
	}
	if f.Meta != nil {
		b = appendMeta(b, f.Meta)
	}
	return append(b, '}'), nil
}

// appendDirRecord appends d's record (dirJSON).
func appendDirRecord(b []byte, d *Dir) ([]byte, error) {
	b = appendPath(append(b, '{'), "path", d.Path)
	return append(appendMeta(b, &d.Meta), '}'), nil
}

// appendKey appends the start of a field of a record: after the opening brace, or after
// the field before it.
func appendKey(b []byte, key string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, `":`...)
}

// appendPath appends a name as encodePath carries it: path, and path_b64 when the name is
// not UTF-8.
func appendPath(b []byte, key, name string) []byte {
	if utf8.ValidString(name) {
		return appendJSONString(appendKey(b, key), name)
	}
	b = appendJSONString(appendKey(b, key), displayPath(name))
	b = append(appendKey(b, key+"_b64"), '"')
	b = base64.StdEncoding.AppendEncode(b, []byte(name))
	return append(b, '"')
}

func appendDigest(b []byte, d *Digest) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, d[:])
	return append(b, '"')
}

func appendMeta(b []byte, m *Meta) []byte {
	b = strconv.AppendUint(appendKey(b, "uid"), uint64(m.UID), 10)
	b = strconv.AppendUint(appendKey(b, "gid"), uint64(m.GID), 10)
	if m.Mode != 0 {
		b = strconv.AppendUint(appendKey(b, "mode"), uint64(m.Mode), 10)
	}
	if m.MtimeNsec != 0 {
		b = strconv.AppendInt(appendKey(b, "mtime_nsec"), int64(m.MtimeNsec), 10)
	}
	if m.MtimeSec != 0 {
		b = strconv.AppendInt(appendKey(b, "mtime_sec"), m.MtimeSec, 10)
	}
	if m.CtimeNsec != 0 {
		b = strconv.AppendInt(appendKey(b, "ctime_ns"), m.CtimeNsec, 10)
	}
	if m.Ino != 0 {
		b = strconv.AppendUint(appendKey(b, "ino"), m.Ino, 10)
	}
	if m.Dev != 0 {
		b = strconv.AppendUint(appendKey(b, "dev"), m.Dev, 10)
	}
	if m.User != "" {
		b = appendJSONString(appendKey(b, "user"), m.User)
	}
	if m.Group != "" {
		b = appendJSONString(appendKey(b, "group"), m.Group)
	}
	if m.Xattrs != nil {
		b = appendXattrs(appendKey(b, "xattrs"), m.Xattrs)
	}
	return b
}

// appendXattrs appends the attributes as encoding/json writes a map: by sorted name, each
// value in standard base64, null for a nil value.
func appendXattrs(b []byte, xattrs map[string][]byte) []byte {
	b = append(b, '{')
	for i, name := range slices.Sorted(maps.Keys(xattrs)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		if v := xattrs[name]; v == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, v)
			b = append(b, '"')
		}
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as encoding/json quotes it: HTML characters escaped,
// U+FFFD for each byte that is not UTF-8, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
