package format

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

const goodSum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestParseManifest(t *testing.T) {
	file := `{"path": "app/a", "size": 4, "sha256": "` + goodSum + `"}`
	raw := func(path, b64 string) string {
		return `{"path": "` + path + `", "path_b64": "` + b64 + `", "size": 4, "sha256": "` + goodSum + `"}`
	}
	rawB64 := base64.StdEncoding.EncodeToString([]byte("app/b\xffn"))
	doc := func(schema, status, files string) string {
		return `{"schema": "` + schema + `", "tool_version": "x", "status": "` + status + `", "files": [` + files +
			`], "skipped": [], "excluded": [], "warnings": []}`
	}
	tests := []struct {
		name, input, wantErr string
	}{
		{"valid", doc(ManifestSchema, "complete", file), ""},
		{"incomplete", doc(ManifestSchema, "incomplete", ""), ""},
		{"null lists", `{"schema": "backup.manifest/v1", "status": "complete", "files": null}`, ""},
		{"trailing space", doc(ManifestSchema, "complete", file) + "\n\n", ""},
		{"empty", "", "EOF"},
		{"not json", "PK\x03\x04", "invalid character"},
		{"array", "[]", "cannot unmarshal array"},
		{"unknown field", `{"schema": "backup.manifest/v1", "status": "complete", "extra": 1}`, `unknown field "extra"`},
		{"trailing data", doc(ManifestSchema, "complete", "") + "{}", "data after the manifest"},
		{"trailing garbage", doc(ManifestSchema, "complete", "") + "x", "invalid character"},
		{"other schema", doc("backup.manifest/v4", "complete", ""), `schema "backup.manifest/v4"`},
		{"v2", doc(ManifestSchemaV2, "complete", file), ""},
		{"v3 databases", `{"schema": "backup.manifest/v3", "status": "complete", "databases": "sqlite", "files": []}`, ""},
		{"v3 other databases", `{"schema": "backup.manifest/v3", "status": "complete", "databases": "all", "files": []}`, `databases "all"`},
		{"v2 with databases", `{"schema": "backup.manifest/v2", "status": "complete", "databases": "sqlite", "files": []}`, "v3 field"},
		{"v1", doc(ManifestSchemaV1, "complete", file), ""},
		{"v1 with a dir", `{"schema": "backup.manifest/v1", "status": "complete", "dirs": [{"path": "a", "uid": 0, "gid": 0}]}`, "v2 fields"},
		{"v1 with an owner", doc(ManifestSchemaV1, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "uid": 1, "gid": 2}`), "v2 fields"},
		// What reuse compares came with v2 too: no version wrote it in a v1 manifest.
		{"v1 with compression", `{"schema": "backup.manifest/v1", "status": "complete", "compression": {"method": "deflate", "level": 6}, "files": []}`, "v2 fields"},
		{"v1 with a raw sum", doc(ManifestSchemaV1, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "raw_sha256": "`+goodSum+`"}`), "v2 fields"},
		// A snapshot was written in v1 manifests (13721b1, before v2): read.
		{"v1 with a snapshot", doc(ManifestSchemaV1, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "snapshot": {"kind": "sqlite", "source_size": 1, "source_mtime": "2026-12-01T03:00:00Z"}}`), ""},
		{"v2 owner, link, xattr", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "link": 1, "uid": 1, "gid": 2, "user": "u", "group": "g", "xattrs": {"user.a": "eA=="}}`), ""},
		{"v2 symlink", `{"schema": "backup.manifest/v2", "status": "complete", "symlinks": [{"path": "a", "target": "/", "uid": 0, "gid": 0}]}`, ""},
		{"symlink twice", `{"schema": "backup.manifest/v2", "status": "complete", "symlinks": [{"path": "a", "target": "/", "uid": 0, "gid": 0}, {"path": "a", "target": "b", "uid": 0, "gid": 0}]}`, "listed twice"},
		{"symlink target raw shown wrong", `{"schema": "backup.manifest/v2", "status": "complete", "symlinks": [{"path": "a", "target": "x", "target_b64": "` + rawB64 + `", "uid": 0, "gid": 0}]}`, "does not show"},
		{"xattr not base64", `{"schema": "backup.manifest/v2", "status": "complete", "dirs": [{"path": "a", "uid": 0, "gid": 0, "xattrs": {"user.a": "!"}}]}`, "illegal base64"},
		{"no schema", `{"status": "complete"}`, `schema ""`},
		{"failed status", doc(ManifestSchema, "failed", ""), `status "failed"`},
		{"no path", doc(ManifestSchema, "complete", `{"size": 1, "sha256": "`+goodSum+`"}`), "a file has no path"},
		{"twice", doc(ManifestSchema, "complete", file+","+file), `file "app/a" is listed twice`},
		{"negative size", doc(ManifestSchema, "complete", `{"path": "a", "size": -1, "sha256": "`+goodSum+`"}`), "size -1"},
		{"short sum", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "abc"}`), `sha256 "abc"`},
		{"upper-case sum", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+strings.ToUpper(goodSum)+`"}`), "sha256"},
		{"raw sum", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "raw_sha256": "`+goodSum+`"}`), ""},
		{"raw sum upper-case", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "raw_sha256": "`+strings.ToUpper(goodSum)+`"}`), "not 64 lowercase hex digits"},
		{"raw sum short", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "raw_sha256": "abc"}`), "not 64 lowercase hex digits"},
		{"size not a number", doc(ManifestSchema, "complete", `{"path": "a", "size": "1", "sha256": "`+goodSum+`"}`), "cannot unmarshal string"},
		{"raw path", doc(ManifestSchema, "complete", raw("app/b\uFFFDn", rawB64)), ""},
		{"raw path shown wrong", doc(ManifestSchema, "complete", raw("app/bn", rawB64)), "does not show"},
		{"raw path that is UTF-8", doc(ManifestSchema, "complete", raw("app/a", "YXBwL2E=")), "is valid UTF-8"},
		{"raw path not base64", doc(ManifestSchema, "complete", raw("app/a", "!!")), "path_b64"},
		{"raw path twice", doc(ManifestSchema, "complete", raw("app/b\uFFFDn", rawB64)+","+raw("app/b\uFFFDn", rawB64)), "listed twice"},
		{"unknown field in a file", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+goodSum+`", "x": 1}`), `unknown field "x"`},
		{"unknown field in a warning", `{"schema": "backup.manifest/v1", "status": "complete", "warnings": [{"path": "a", "x": 1}]}`, `unknown field "x"`},
		{"raw path in a skip", `{"schema": "backup.manifest/v1", "status": "complete", "skipped": [{"path": "a", "path_b64": "YQ==", "kind": "fifo"}]}`, "is valid UTF-8"},
		{"huge size", doc(ManifestSchema, "complete", `{"path": "a", "size": 1e30, "sha256": "`+goodSum+`"}`), "cannot unmarshal number"},
		{"raw rule that is UTF-8", `{"schema": "backup.manifest/v3", "status": "complete", "excluded": [{"path": "app/x", "rule": "x", "rule_b64": "eA=="}]}`, `rule of "app/x": rule_b64 "eA==" is valid UTF-8: the rule alone says it`},
		{"raw rule not base64", `{"schema": "backup.manifest/v3", "status": "complete", "excluded": [{"path": "app/x", "rule": "x", "rule_b64": "!!"}]}`, `rule of "app/x": rule_b64 "!!": illegal base64`},
		{"raw rule shown wrong", `{"schema": "backup.manifest/v3", "status": "complete", "excluded": [{"path": "app/x", "rule": "x", "rule_b64": "eP8="}]}`, `rule of "app/x": rule "x" does not show rule_b64 "eP8="`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest(strings.NewReader(tt.input))
			if tt.wantErr == "" {
				if err != nil || m == nil {
					t.Fatalf("ParseManifest: %v, want a manifest", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseManifestSizeLimit(t *testing.T) {
	// An endless document: the parser must stop at the limit, not read forever.
	r := io.MultiReader(strings.NewReader(`{"schema": "`), endless('a'))
	_, err := parseManifest(r, 1<<20, all)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("error %v, want the size limit", err)
	}
}

// TestMarshalThenParse checks that names which are not UTF-8 survive the manifest's JSON
// byte for byte, in every list, through MarshalManifest and through WriteTo.
func TestMarshalThenParse(t *testing.T) {
	m := &Manifest{ToolVersion: "t", Status: "complete",
		Files:    []File{{Path: "a/b", Size: 4, SHA256: digest(goodSum)}, {Path: "a/\xff\xfe", Size: 1, SHA256: digest(goodSum)}, {Path: "a/caf\xe9", SHA256: digest(goodSum)}},
		Skipped:  []Skipped{{Path: "a/s\xff", Kind: "fifo"}},
		Excluded: []Excluded{{Path: "a/x\x80", Rule: "*"}},
		Warnings: []Warning{{Path: "a/w\xc3", Op: "open", Error: "permission denied", Lost: true}},
	}
	marshalled, err := MarshalManifest(cloneManifest(m))
	if err != nil {
		t.Fatal(err)
	}
	var written bytes.Buffer
	if _, err := cloneManifest(m).WriteTo(&written); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"MarshalManifest": marshalled, "WriteTo": written.Bytes()} {
		got, err := ParseManifest(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("ParseManifest of %s's output: %v", name, err)
		}
		if !slices.Equal(got.Files, m.Files) || !slices.Equal(got.Skipped, m.Skipped) ||
			!slices.Equal(got.Excluded, m.Excluded) || !slices.Equal(got.Warnings, m.Warnings) {
			t.Errorf("%s: got %+v, want %+v", name, got, m)
		}
	}
}

// endless reads as the byte c, forever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestRecordUnmarshal reads records as a receipt's readers do: losslessly, and ignoring a
// field a later version may add (ParseManifest alone is strict).
func TestRecordUnmarshal(t *testing.T) {
	var w []Warning
	data := `[{"path": "a/\uFFFD", "path_b64": "YS//", "op": "open", "error": "denied", "lost": true, "later": 1}]`
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		t.Fatal(err)
	}
	if want := (Warning{Path: "a/\xff", Op: "open", Error: "denied", Lost: true}); len(w) != 1 || w[0] != want {
		t.Errorf("got %+v, want %+v", w, want)
	}
	var s Skipped
	if err := json.Unmarshal([]byte(`{"path": "a", "path_b64": "YQ==", "kind": "fifo"}`), &s); err == nil {
		t.Errorf("a path_b64 that is UTF-8 was accepted: %+v", s)
	}
}

// TestParseManifestOfEntries: records of files, folders and symlinks are read up to twice
// the archive's entries and missingEntries more (verify then names what is missing), and
// the manifest refused at the next one, in whichever of the three lists it is.
func TestParseManifestOfEntries(t *testing.T) {
	const entries = 10
	records := func(n int) string { return strings.TrimSuffix(strings.Repeat(`{},`, n), ",") }
	for _, list := range []string{"files", "dirs", "symlinks"} {
		upTo := 2*entries + missingEntries
		for n, want := range map[int]string{
			upTo:     "",
			upTo + 1: fmt.Sprintf("%d files, folders and symlinks or more, for an archive of %d entries", upTo+1, entries),
		} {
			data := `{"schema":"` + ManifestSchema + `","status":"complete","files":[],"` + list + `":[` + records(n) + `]}`
			_, err := ParseManifestOf(strings.NewReader(data), Within{Entries: entries})
			_, scanErr := ScanManifest(strings.NewReader(data), Within{Entries: entries}, func(*File) {})
			for _, err := range []error{err, scanErr} {
				if errors.Is(err, ErrNotAsWritten) { // the scan's answer for "files": [{}]
					continue
				}
				refused := err != nil && strings.Contains(err.Error(), "files, folders and symlinks or more")
				if refused != (want != "") || refused && !strings.HasSuffix(err.Error(), want) {
					t.Errorf("%d %s records: %v, want the limit's error %q", n, list, err, want)
				}
			}
		}
	}
}
