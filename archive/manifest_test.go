package archive

import (
	"io"
	"strings"
	"testing"
)

const goodSum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestParseManifest(t *testing.T) {
	file := `{"path": "app/a", "size": 4, "sha256": "` + goodSum + `"}`
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
		{"other schema", doc("backup.manifest/v2", "complete", ""), `schema "backup.manifest/v2"`},
		{"no schema", `{"status": "complete"}`, `schema ""`},
		{"failed status", doc(ManifestSchema, "failed", ""), `status "failed"`},
		{"no path", doc(ManifestSchema, "complete", `{"size": 1, "sha256": "`+goodSum+`"}`), "a file has no path"},
		{"twice", doc(ManifestSchema, "complete", file+","+file), `file "app/a" is listed twice`},
		{"negative size", doc(ManifestSchema, "complete", `{"path": "a", "size": -1, "sha256": "`+goodSum+`"}`), "size -1"},
		{"short sum", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "abc"}`), `sha256 "abc"`},
		{"upper-case sum", doc(ManifestSchema, "complete", `{"path": "a", "size": 1, "sha256": "`+strings.ToUpper(goodSum)+`"}`), "sha256"},
		{"size not a number", doc(ManifestSchema, "complete", `{"path": "a", "size": "1", "sha256": "`+goodSum+`"}`), "cannot unmarshal string"},
		{"huge size", doc(ManifestSchema, "complete", `{"path": "a", "size": 1e30, "sha256": "`+goodSum+`"}`), "cannot unmarshal number"},
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
	_, err := parseManifest(r, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("error %v, want the size limit", err)
	}
}

func TestMarshalThenParse(t *testing.T) {
	m := &Manifest{ToolVersion: "t", Status: "complete", Files: []File{{Path: "a/b", Size: 4, SHA256: goodSum}}}
	data, err := MarshalManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseManifest(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("ParseManifest of MarshalManifest's output: %v", err)
	}
	if len(got.Files) != 1 || got.Files[0] != m.Files[0] {
		t.Errorf("files %+v, want %+v", got.Files, m.Files)
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
