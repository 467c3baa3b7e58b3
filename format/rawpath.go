package format

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A stored name is bytes: Linux allows any but NUL in a name, and a zip entry's name is
// bytes too. A JSON string holds UTF-8 only (encoding/json turns other bytes into U+FFFD),
// so a record of the manifest or the receipt whose path is not valid UTF-8 carries
// path_b64 beside it: the name's bytes in standard base64. Its path is then the name with
// U+FFFD for each byte that is not UTF-8, for display. A valid UTF-8 path never has a
// path_b64, so that each name has one encoding. In memory, Path is always the name's bytes.

// jsonPath is a path as the JSON records carry it.
type jsonPath struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
}

func encodePath(name string) jsonPath {
	if utf8.ValidString(name) {
		return jsonPath{Path: name}
	}
	return jsonPath{Path: displayPath(name), PathB64: base64.StdEncoding.EncodeToString([]byte(name))}
}

// JSONText is name as the JSON of backup's outputs carries it (list's entries, the problems
// of verify and restore): text, with U+FFFD for each byte that is not UTF-8, and, for such a
// name only, its bytes in standard base64, for a "_b64" twin beside it.
func JSONText(name string) (text, b64 string) {
	p := encodePath(name)
	return p.Path, p.PathB64
}

// displayPath is name as a JSON string shows it: each run of bytes that are not UTF-8 is one
// U+FFFD.
func displayPath(name string) string { return strings.ToValidUTF8(name, "\uFFFD") }

// decode returns the name p records, refusing a path_b64 that is not base64, that a plain
// path would have said, or that its display path does not match.
func (p jsonPath) decode() (string, error) {
	return decodeTwin(p.Path, p.PathB64, "path")
}

// decodeTwin returns the bytes a field named field records as text, or, when they are not
// UTF-8, as b64 in its twin field_b64, which decode checks as it does a path's.
func decodeTwin(text, b64, field string) (string, error) {
	if b64 == "" {
		return text, nil
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s_b64 %q: %w", field, b64, err)
	case utf8.Valid(raw):
		return "", fmt.Errorf("%s_b64 %q is valid UTF-8: the %s alone says it", field, b64, field)
	case displayPath(string(raw)) != text:
		return "", fmt.Errorf("%s %q does not show %s_b64 %q", field, text, field, b64)
	}
	return string(raw), nil
}

// The records' UnmarshalJSON methods are as lenient as encoding/json is (unknown fields are
// ignored, as a receipt's readers want); ParseManifest decodes the same JSON records itself,
// strictly.

type fileJSON struct {
	jsonPath
	Size      int64       `json:"size"`
	SHA256    Digest      `json:"sha256"`
	Link      int         `json:"link,omitempty"`
	Snapshot  *CopySource `json:"snapshot,omitempty"`
	RawSHA256 Digest      `json:"raw_sha256,omitzero"`
	*Meta
}

func (j fileJSON) value() (File, error) {
	path, err := j.decode()
	f := File{Path: path, Size: j.Size, SHA256: j.SHA256, Link: j.Link, Meta: j.Meta, Snapshot: j.Snapshot}
	if !j.RawSHA256.IsZero() {
		raw := j.RawSHA256
		f.RawSHA256 = &raw
	}
	return f, err
}

func (f *File) record() fileJSON {
	j := fileJSON{jsonPath: encodePath(f.Path), Size: f.Size, SHA256: f.SHA256, Link: f.Link, Snapshot: f.Snapshot, Meta: f.Meta}
	if f.RawSHA256 != nil {
		j.RawSHA256 = *f.RawSHA256
	}
	return j
}

// MarshalJSON writes the path losslessly (path_b64 beside it when it is not UTF-8).
func (f File) MarshalJSON() ([]byte, error) {
	return json.Marshal(f.record())
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *File) UnmarshalJSON(data []byte) error { return unmarshalRecord(data, f, fileJSON.value) }

type skippedJSON struct {
	jsonPath
	Kind string `json:"kind"`
}

func (j skippedJSON) value() (Skipped, error) {
	path, err := j.decode()
	return Skipped{Path: path, Kind: j.Kind}, err
}

// MarshalJSON writes the path losslessly (path_b64 beside it when it is not UTF-8).
func (s Skipped) MarshalJSON() ([]byte, error) {
	return json.Marshal(skippedJSON{encodePath(s.Path), s.Kind})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Skipped) UnmarshalJSON(data []byte) error {
	return unmarshalRecord(data, s, skippedJSON.value)
}

// A rule is a user's pattern, and bytes as a name is (an --exclude-from file in Latin-1): one
// that is not UTF-8 has rule_b64 beside it, as a path has path_b64.
type excludedJSON struct {
	jsonPath
	Rule    string `json:"rule"`
	RuleB64 string `json:"rule_b64,omitempty"`
}

func (j excludedJSON) value() (Excluded, error) {
	path, err := j.decode()
	rule, ruleErr := decodeTwin(j.Rule, j.RuleB64, "rule")
	if err == nil && ruleErr != nil {
		err = fmt.Errorf("rule of %q: %w", path, ruleErr)
	}
	return Excluded{Path: path, Rule: rule}, err
}

// MarshalJSON writes the path and the rule losslessly (a _b64 twin beside each that is not
// UTF-8).
func (e Excluded) MarshalJSON() ([]byte, error) {
	rule := encodePath(e.Rule)
	return json.Marshal(excludedJSON{encodePath(e.Path), rule.Path, rule.PathB64})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Excluded) UnmarshalJSON(data []byte) error {
	return unmarshalRecord(data, e, excludedJSON.value)
}

type warningJSON struct {
	jsonPath
	Op    string `json:"op"`
	Error string `json:"error"`
	Lost  bool   `json:"lost"`
}

func (j warningJSON) value() (Warning, error) {
	path, err := j.decode()
	return Warning{Path: path, Op: j.Op, Error: j.Error, Lost: j.Lost}, err
}

// MarshalJSON writes the path losslessly (path_b64 beside it when it is not UTF-8).
func (w Warning) MarshalJSON() ([]byte, error) {
	return json.Marshal(warningJSON{encodePath(w.Path), w.Op, w.Error, w.Lost})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (w *Warning) UnmarshalJSON(data []byte) error {
	return unmarshalRecord(data, w, warningJSON.value)
}

// WouldCopy is a file a dry run would store as a copy made from it (a database snapshot):
// its stored name and the kind of copy, as a dry run's receipt lists them.
type WouldCopy struct {
	Path string
	Kind string // CopySource.Kind
}

type wouldCopyJSON struct {
	jsonPath
	Kind string `json:"kind"`
}

func (j wouldCopyJSON) value() (WouldCopy, error) {
	path, err := j.decode()
	return WouldCopy{Path: path, Kind: j.Kind}, err
}

// MarshalJSON writes the path losslessly (path_b64 beside it when it is not UTF-8).
func (w WouldCopy) MarshalJSON() ([]byte, error) {
	return json.Marshal(wouldCopyJSON{encodePath(w.Path), w.Kind})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (w *WouldCopy) UnmarshalJSON(data []byte) error {
	return unmarshalRecord(data, w, wouldCopyJSON.value)
}

// unmarshalRecord decodes data as the JSON record J, and sets *out to its value.
func unmarshalRecord[J any, T any](data []byte, out *T, value func(J) (T, error)) error {
	var j J
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	v, err := value(j)
	*out = v
	return err
}

// values turns decoded JSON records into their values; nil stays nil.
func values[J any, T any](records []J, value func(J) (T, error)) ([]T, error) {
	if records == nil {
		return nil, nil
	}
	out := make([]T, len(records))
	for i, j := range records {
		v, err := value(j)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
