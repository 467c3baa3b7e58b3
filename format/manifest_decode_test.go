package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// parseManifestJSON is the parser that manifestDecoder replaced, decoding with
// encoding/json: the reference the tests and the fuzz target hold it to.
func parseManifestJSON(r io.Reader, limit int64) (*Manifest, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	var wire manifestWire
	if err := dec.Decode(&wire); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("manifest is larger than %d bytes", limit)
		}
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the manifest")
		}
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	return fromWire(&wire)
}

// compareParsers fails t unless the two parsers give data the same manifest, or the same
// error.
func compareParsers(t *testing.T, data []byte) {
	t.Helper()
	compareParsersLimit(t, data, MaxManifestSize)
}

func compareParsersLimit(t *testing.T, data []byte, limit int64) {
	t.Helper()
	want, wantErr := parseManifestJSON(bytes.NewReader(data), limit)
	// Read whole, and a few bytes at a time: records cut off by the end of what was read.
	for _, chunk := range []int{len(data), 1, 7} {
		got, err := parseManifest(&chunkReader{data, chunk}, limit, all)
		if err != nil && strings.HasSuffix(err.Error(), "created given twice") {
			continue // refused on purpose: see decodeCreated
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("input %q in reads of %d:\nerror %v\nwant  %v", data, chunk, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q in reads of %d:\ngot  %+v\nwant %+v", data, chunk, got, want)
		}
		compareWithoutNotes(t, data, chunk, limit, want, wantErr)
	}
}

// compareWithoutNotes fails t unless a parse that lets the notes go gives data the manifest
// want without its notes but summed up as its notes are, or the same error wantErr; or, for a list of notes given twice
// (which encoding/json decodes one over the other), says so.
func compareWithoutNotes(t *testing.T, data []byte, chunk int, limit int64, want *Manifest, wantErr error) {
	t.Helper()
	got, err := parseManifest(&chunkReader{data, chunk}, limit, Within{Entries: NoEntryLimit})
	if err != nil && strings.HasSuffix(err.Error(), " given twice") {
		return
	}
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("input %q in reads of %d, notes let go:\nerror %v\nwant  %v", data, chunk, err, wantErr)
	}
	if got != nil && want != nil {
		// What a receipt's notes are held to: the lists as they would have been held.
		if g, w := got.Notes(), want.Notes(); g != w {
			t.Fatalf("input %q in reads of %d, notes let go: summed up as %+v, held as %+v", data, chunk, g, w)
		}
		got.notes = nil
	}
	if want != nil {
		held := *want
		held.Skipped, held.Excluded, held.Warnings = nil, nil, nil
		want = &held
	}
	if got != nil && (len(got.Skipped) > 0 || len(got.Excluded) > 0 || len(got.Warnings) > 0) {
		t.Fatalf("input %q in reads of %d, notes let go: %d skipped, %d excluded, %d warnings held",
			data, chunk, len(got.Skipped), len(got.Excluded), len(got.Warnings))
	}
	if got != nil {
		got.Skipped, got.Excluded, got.Warnings = nil, nil, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("input %q in reads of %d, notes let go:\ngot  %+v\nwant %+v", data, chunk, got, want)
	}
}

// chunkReader reads data at most n bytes at a time.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), max(r.n, 1))], r.data)
	r.data = r.data[n:]
	return n, nil
}

const sampleFile = `{"path": "a", "size": 1, "sha256": "` + goodSum + `"}`

// decodeCases are inputs where a decoder that is not encoding/json could go wrong.
var decodeCases = map[string]string{
	"escapes":                `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a\"\\\/\b\f\n\r\t\u00e9\u2028\ud83d\ude00", "size": 1, "sha256": "` + goodSum + `"}]}`,
	"lone surrogate":         `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a\ud800", "size": 1, "sha256": "` + goodSum + `"}, {"path": "b\udc00\u0041", "size": 1, "sha256": "` + goodSum + `"}, {"path": "c\ud800\ud800", "size": 1, "sha256": "` + goodSum + `"}]}`,
	"bad escape":             `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a\x", "size": 1, "sha256": "` + goodSum + `"}]}`,
	"short u escape":         `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a\u12", "size": 1}]}`,
	"not utf-8":              "{\"schema\": \"backup.manifest/v2\", \"status\": \"complete\", \"files\": [{\"path\": \"a\xff\xc3\", \"size\": 1, \"sha256\": \"" + goodSum + "\"}]}",
	"control in string":      "{\"schema\": \"backup.manifest/v2\", \"status\": \"complete\", \"files\": [{\"path\": \"a\nb\", \"size\": 1}]}",
	"escaped key":            `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"p\u0061th": "a", "size": 1, "sha256": "` + goodSum + `"}]}`,
	"folded keys":            `{"SCHEMA": "backup.manifest/v2", "Status": "complete", "Files": [{"PATH": "a", "Size": 1, "sha256": "` + goodSum + `", "UID": 3}], "ſkipped": []}`,
	"kelvin":                 "{\"schema\": \"backup.manifest/v2\", \"status\": \"complete\", \"s\u212aipped\": [{\"path\": \"a\", \"\u212aind\": \"fifo\"}]}",
	"key twice":              `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "path": "b", "size": 1, "size": 2, "sha256": "` + goodSum + `"}]}`,
	"list twice":             `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1, "sha256": "` + goodSum + `"}, ` + sampleFile + `, {"path": "c", "size": 3, "sha256": "` + goodSum + `", "uid": 1}], "files": [{"path": "x"}], "files": [{"size": 7}, {"path": "y"}, null]}`,
	"list then null":         `{"schema": "backup.manifest/v2", "status": "complete", "files": [` + sampleFile + `], "files": null}`,
	"empty list twice":       `{"schema": "backup.manifest/v2", "status": "complete", "files": [` + sampleFile + `], "files": []}`,
	"null values":            `{"schema": "backup.manifest/v2", "status": null, "tool_version": null, "files": [{"path": "a", "size": null, "sha256": "` + goodSum + `", "uid": null, "link": null, "raw_sha256": null}]}`,
	"null record":            `{"schema": "backup.manifest/v2", "status": "complete", "files": [null], "dirs": [null, {"path": "d"}]}`,
	"record not object":      `{"schema": "backup.manifest/v2", "status": "complete", "files": [1, "x", true, []]}`,
	"list not array":         `{"schema": "backup.manifest/v2", "status": "complete", "files": {"path": "a"}}`,
	"string for number":      `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": "1", "sha256": "` + goodSum + `"}]}`,
	"number forms":           `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1.0, "sha256": "` + goodSum + `"}, {"path": "b", "size": 1e2, "sha256": "` + goodSum + `"}, {"path": "c", "size": -0, "sha256": "` + goodSum + `", "uid": -0}]}`,
	"big numbers":            `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 9223372036854775807, "sha256": "` + goodSum + `", "uid": 4294967295, "gid": 4294967296, "ino": 18446744073709551615, "dev": 18446744073709551616}]}`,
	"negative unsigned":      `{"schema": "backup.manifest/v2", "status": "complete", "dirs": [{"path": "a", "uid": -1}]}`,
	"leading zero":           `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 01}]}`,
	"bad number":             `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1.}]}`,
	"bad literal":            `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": nul}]}`,
	"literal in list":        `{"schema": "backup.manifest/v2", "status": "complete", "files": [tru]}`,
	"number in list":         `{"schema": "backup.manifest/v2", "status": "complete", "files": [0x]}`,
	"escaped digest":         `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1, "sha256": "\u0039f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}]}`,
	"digest not string":      `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1, "sha256": 5}]}`,
	"bad digest then type":   `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": "x", "sha256": "abc"}]}`,
	"type then bad digest":   `{"schema": "backup.manifest/v2", "status": 5, "files": [{"path": "a", "size": 1, "sha256": "abc"}, {"path": 5}]}`,
	"errors then syntax":     `{"schema": "backup.manifest/v2", "status": "complete", "x": 1, "files": [{"path": "a", "sha256": "abc"}, {"path": "b"} x]}`,
	"unknown then eof":       `{"schema": "backup.manifest/v2", "x": 1, "files": [{"path": "a"`,
	"xattrs":                 `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1, "sha256": "` + goodSum + `", "uid": 1, "xattrs": {"user.a": "eA==", "user.b": null, "user.c": ""}}], "dirs": [{"path": "d", "xattrs": {}}]}`,
	"xattr not base64":       `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1, "sha256": "` + goodSum + `", "xattrs": {"user.a": "e"}}]}`,
	"snapshot":               `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a.db", "size": 1, "sha256": "` + goodSum + `", "snapshot": {"kind": "sqlite", "source_size": 3, "source_mtime": "2026-01-02T03:04:05.000000006+01:00"}}]}`,
	"bad snapshot time":      `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a.db", "size": 1, "sha256": "` + goodSum + `", "snapshot": {"source_mtime": 5}}]}`,
	"compression":            `{"schema": "backup.manifest/v2", "status": "complete", "compression": {"method": "zstd", "level": 3}, "files": []}`,
	"compression wrong":      `{"schema": "backup.manifest/v2", "status": "complete", "compression": {"method": 1}, "files": []}`,
	"all lists":              `{"schema": "backup.manifest/v2", "status": "incomplete", "files": [], "dirs": [{"path": "\ufffd", "path_b64": "/w==", "uid": 1, "gid": 2, "mtime_nsec": 3, "ctime_ns": -4, "ino": 5, "dev": 6, "user": "u", "group": "g"}], "symlinks": [{"path": "l", "target": "\ufffd", "target_b64": "/w==", "uid": 0, "gid": 0}], "skipped": [{"path": "s", "kind": "fifo"}], "excluded": [{"path": "x", "rule": "*"}], "warnings": [{"path": "w", "op": "open", "error": "e", "lost": true}], "created": [{"path": "c", "type": "dir"}]}`,
	"warning forms":          `{"schema": "backup.manifest/v2", "status": "incomplete", "warnings": [{"path": "a", "op": "open", "error": "e", "lost": false}, {"Path": "b", "lost": true}, {"path": "c", "lost": truex}]}`,
	"warning lost not bool":  `{"schema": "backup.manifest/v2", "status": "incomplete", "warnings": [{"path": "a", "lost": "true"}, {"path": "b", "lost": null}, {"path": "c", "lost": 1}], "skipped": [{"path": "s", "kind": 5}]}`,
	"lists repeated keys":    `{"schema": "backup.manifest/v2", "status": "incomplete", "skipped": [{"path": "s", "kind": "fifo", "kind": "socket", "path_b64": "/w=="}], "excluded": [{"rule": "*", "path": "x", "rule": "y", "other": 1}], "warnings": [{"lost": true, "lost": false, "op": "\u006fpen"}]}`,
	"created forms":          `{"schema": "backup.manifest/v3", "status": "complete", "created": [{"path": "a", "type": "file", "size": 3, "sha256": "` + goodSum + `"}, {"path": "l", "type": "symlink", "target": "\ufffd", "target_b64": "/w=="}, {"path": "d", "type": "dir", "size": -1}, {"path": "e", "Type": "dir", "size": 1.5}]}`,
	"unknown in dir":         `{"schema": "backup.manifest/v2", "status": "complete", "dirs": [{"path": "d", "target": "x"}]}`,
	"space everywhere":       " \t\r\n{ \"schema\" : \"backup.manifest/v2\" ,\n\"status\":\"complete\" , \"files\" : [ { \"path\" : \"a\" , \"size\" : 1 , \"sha256\" : \"" + goodSum + "\" } , {\"path\":\"b\",\"size\":2,\"sha256\":\"" + goodSum + "\"} ] } \n",
	"lists in other cases":   `{"schema": "backup.manifest/v2", "status": "complete", "Files": [{"path": "a", "size": 1, "sha256": "` + goodSum + `"}], "DIRS": [{"path": "d"}], "SymLinks": [{"path": "l", "target": "a"}], "Skipped": [{"path": "s", "kind": "fifo"}], "EXCLUDED": [{"path": "x", "rule": "*"}], "\u017fkipped": [{"path": "t", "kind": "socket"}], "Warnings": [{"path": "w", "op": "open", "error": "e", "lost": false}]}`,
	"notes given twice":      `{"schema": "backup.manifest/v2", "status": "complete", "skipped": [{"path": "\ufffd"}], "Skipped": [{"path_b64": "/w=="}]}`,
	"bad note then type":     `{"schema": "backup.manifest/v2", "status": "complete", "warnings": [{"path": "a", "path_b64": "!"}, {"path": "b"}], "excluded": [{"path": 1}]}`,
	"bad notes given twice":  `{"schema": "backup.manifest/v2", "status": "complete", "warnings": [{"path": "a", "path_b64": "!"}], "warnings": [{"path_b64": ""}]}`,
	"bad notes then null":    `{"schema": "backup.manifest/v2", "status": "complete", "warnings": [{"path": "a", "path_b64": "!"}], "Warnings": null}`,
	"bad notes in order":     `{"schema": "backup.manifest/v2", "status": "complete", "warnings": [{"path": "a", "path_b64": "!"}], "skipped": [{"path": "b"}, {"path": "c", "path_b64": "YQ=="}]}`,
	"bad created then more":  `{"schema": "backup.manifest/v3", "status": "complete", "created": [{"path": "a", "type": "dir"}, {}, {"path": "b", "type": "disk"}, {"path": "c", "type": 1}]}`,
	"bad created in order":   `{"schema": "backup.manifest/v3", "status": "complete", "created": [{"path": "a", "type": "dir"}, {"type": "dir"}, {}], "warnings": [{"path": "w", "path_b64": "!"}]}`,
	"bad created then null":  `{"schema": "backup.manifest/v3", "status": "complete", "created": [{}], "Created": null}`,
	"bad created twice":      `{"schema": "backup.manifest/v3", "status": "complete", "created": [{}, {}], "created": [{"path": "a", "type": "dir"}]}`,
	"created given twice":    `{"schema": "backup.manifest/v3", "status": "complete", "created": [{"path": "a", "type": "dir"}, {"path": "b", "type": "dir"}], "created": [{"type": "symlink"}]}`,
	"empty object":           `{}`,
	"null":                   `null`,
	"top-level string":       `"x"`,
	"top-level number":       `12`,
	"top-level bad":          `-`,
	"only space":             " \n",
	"unclosed":               `{"schema": "backup.manifest/v2"`,
	"unclosed string":        `{"schema": "backup.manifest/v2`,
	"missing colon":          `{"schema" "x"}`,
	"missing comma":          `{"schema": "x" "status": "complete"}`,
	"trailing comma":         `{"schema": "x",}`,
	"trailing comma in list": `{"files": [{"path": "a"},]}`,
	"list missing comma":     `{"files": [{"path": "a"} {"path": "b"}]}`,
	"key not string":         `{schema: "x"}`,
	"bracket mismatch":       `{"files": [{"path": "a"]]}`,
	"trailing string":        `{"schema": "backup.manifest/v2", "status": "complete"} "x"`,
	"trailing number":        `{"schema": "backup.manifest/v2", "status": "complete"} 1x`,
	"trailing bad":           `{"schema": "backup.manifest/v2", "status": "complete"} ]`,
	"trailing literal":       `{"schema": "backup.manifest/v2", "status": "complete"} tx`,
	"trailing open":          `{"schema": "backup.manifest/v2", "status": "complete"} [garbage`,
	"trailing unclosed":      `{"schema": "backup.manifest/v2", "status": "complete"} "x`,
}

func TestParseManifestMatchesEncodingJSON(t *testing.T) {
	for name, input := range decodeCases {
		t.Run(name, func(t *testing.T) { compareParsers(t, []byte(input)) })
	}
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzParseManifest/*")
	for _, path := range seeds {
		t.Run(filepath.Base(path), func(t *testing.T) { compareParsers(t, fuzzSeed(t, path)) })
	}
}

// TestParseManifestLimitMatches compares the parsers at limits around the manifest's size.
func TestParseManifestLimitMatches(t *testing.T) {
	for _, name := range []string{"all lists", "unclosed", "trailing string"} {
		data := []byte(decodeCases[name])
		for limit := int64(len(data)) - 3; limit <= int64(len(data))+1; limit++ {
			compareParsersLimit(t, data, limit)
		}
	}
}

// TestParseManifestStreams checks that the decoder reads the stream a piece at a time, and
// reports a read error as json.Decoder does.
func TestParseManifestStreams(t *testing.T) {
	input := decodeCases["all lists"]
	if _, err := ParseManifest(iotest.OneByteReader(strings.NewReader(input))); err != nil {
		t.Errorf("one byte at a time: %v", err)
	}
	boom := errors.New("boom")
	for _, n := range []int{0, 10, len(input) - 1} {
		r := io.MultiReader(strings.NewReader(input[:n]), iotest.ErrReader(boom))
		if _, err := ParseManifest(r); !errors.Is(err, boom) {
			t.Errorf("read error after %d bytes: %v, want boom", n, err)
		}
	}
}

// fuzzSeed reads the input of a file of go test's fuzz corpus.
func fuzzSeed(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, lit, _ := strings.Cut(string(data), "[]byte(")
	var s string
	if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimSpace(lit), ")"), "%q", &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// FuzzParseManifestMatchesJSON checks that the decoder decodes whatever it is given as
// encoding/json does: the same manifest, or the same error.
func FuzzParseManifestMatchesJSON(f *testing.F) {
	for _, input := range decodeCases {
		f.Add([]byte(input))
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareParsers(t, data) })
}

// TestParseManifestRefusesHugeRecord: a value larger than MaxManifestRecord, of any kind
// (a string in a record, a record of many fields, a number as an element of a list or as a
// top-level field), is refused once that much of it is read, not held whole: a small
// archive can inflate into one.
func TestParseManifestRefusesHugeRecord(t *testing.T) {
	huge := MaxManifestRecord + 1
	for name, doc := range map[string]string{
		"string":            `{"warnings":[{"path":"` + strings.Repeat("x", huge) + `"}]}`,
		"record":            `{"warnings":[{` + strings.Repeat(`"path":"x",`, huge/11) + `"op":"open"}]}`,
		"number in a list":  `{"files":[` + strings.Repeat("1", huge) + `]}`,
		"number at the top": `{"tool_version":` + strings.Repeat("1", huge) + `}`,
		"string at the top": `{"tool_version":"` + strings.Repeat("1", huge) + `"}`,
		"array at the top":  `{"compression":[` + strings.Repeat("1,", huge/2) + `1]}`,
	} {
		_, err := ParseManifest(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), "a record of more than 16777216 bytes") {
			t.Errorf("%s: %v; want a record of more than 16777216 bytes", name, err)
		}
	}
}

// TestParseManifestRefusesHugeEscapedString: a string of nothing but two-byte escapes
// (`\\`, `\n`), which fall on the read buffer's edges, is refused once 16 MiB of it is read,
// as any other value is, not held whole: a 48 MiB one was read to its end.
func TestParseManifestRefusesHugeEscapedString(t *testing.T) {
	const size = 48 << 20
	for name, prefix := range map[string]string{
		"in a record":   `{"warnings":[{"path":"`,
		"at the top":    `{"tool_version":"`,
		"key":           `{"`,
		"in a compound": `{"compression":{"method":"`,
	} {
		for _, esc := range []string{`\\`, `\n`} {
			r := &countingReader{r: io.MultiReader(strings.NewReader(prefix), io.LimitReader(repeatReader(esc), size))}
			_, err := ParseManifest(r)
			if err == nil || !strings.Contains(err.Error(), "a record of more than 16777216 bytes") {
				t.Errorf("%s, %s: %v; want a record of more than 16777216 bytes", name, esc, err)
			}
			if r.n > MaxManifestRecord+1<<20 {
				t.Errorf("%s, %s: read %d bytes; want the string refused at 16 MiB", name, esc, r.n)
			}
		}
	}
}

// repeatReader reads its string over and over.
type repeatReader string

func (s repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n+len(s) <= len(p) {
		n += copy(p[n:], s)
	}
	return n, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestParseManifestEscapedFieldsLinear: a record of many short strings with an escape (a
// warning's "op":"\n" given 20,000 times, 200 KB) made the fast parser take room for all the
// rest of the record for each string it unescaped, 2 GB here and hours of zeroing memory
// for a record of 16 MiB that a small archive inflates into: it takes about what it reads.
func TestParseManifestEscapedFieldsLinear(t *testing.T) {
	doc := `{"schema": "backup.manifest/v2", "status": "incomplete", "warnings": [{` + strings.Repeat(`"op":"\n",`, 20000) + `"path":"x"}]}`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := ParseManifest(strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("parsing a record of %d bytes allocated %d MiB; want at most 64", len(doc), n>>20)
	}
}

// all reads a manifest from no archive, holding all it has, as ParseManifest does.
var all = Within{Entries: NoEntryLimit, Notes: true}
