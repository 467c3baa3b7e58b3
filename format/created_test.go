package format

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestCreatedRoundTrip: a before-state's created list survives WriteTo and ParseManifest,
// names that are not UTF-8 included.
func TestCreatedRoundTrip(t *testing.T) {
	created := []Created{
		{Path: "app/new", Type: CreatedDir},
		{Path: "app/new/caf\xe9", Type: CreatedFile, Size: 4, SHA256: goodSum},
		{Path: "app/new/l", Type: CreatedSymlink, Target: "../t\xff"},
	}
	m := &Manifest{ToolVersion: "t", Status: "complete", Files: []File{}, Created: created}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ParseManifest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Created, created) {
		t.Errorf("created %+v, want %+v", got.Created, created)
	}
}

// TestParseCreated: the created records are held to the manifest's strictness.
func TestParseCreated(t *testing.T) {
	doc := func(created string) string {
		return `{"schema": "` + ManifestSchema + `", "tool_version": "x", "status": "complete", "files": [], ` +
			`"skipped": [], "excluded": [], "warnings": [], "created": [` + created + `]}`
	}
	tests := []struct{ name, created, wantErr string }{
		{"file", `{"path": "a/f", "type": "file", "size": 4, "sha256": "` + goodSum + `"}`, ""},
		{"dir", `{"path": "a", "type": "dir"}`, ""},
		{"file without sha256", `{"path": "a/f", "type": "file", "size": 4}`, `created file "a/f" has size 4 and sha256 ""`},
		{"unknown type", `{"path": "a/f", "type": "fifo"}`, `created "a/f" has type "fifo", want file, dir or symlink`},
		{"no path", `{"type": "dir"}`, "a created path has no path"},
		{"unknown field", `{"path": "a", "type": "dir", "mode": 1}`, `unknown field "mode"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest(strings.NewReader(doc(tt.created)))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
