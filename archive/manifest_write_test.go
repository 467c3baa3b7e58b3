package archive

import (
	"bytes"
	"testing"
)

func TestManifestWriteToMatchesMarshal(t *testing.T) {
	full := &Manifest{
		ToolVersion: "1.0",
		Status:      "complete",
		Files:       []File{{Path: "a/b", Size: 3, SHA256: Digest{0xab}}, {Path: "a/ü\"c", Size: 0, SHA256: Digest{1}}, {Path: "a/\xff", SHA256: Digest{2}}},
		Skipped:     []Skipped{{Path: "a/s", Kind: "socket"}},
		Warnings:    []Warning{{Path: "a/w", Op: "read", Error: "boom", Lost: true}},
	}
	for name, m := range map[string]*Manifest{
		"full":     full,
		"no files": {Status: "complete", Files: []File{}},
		"nil":      {},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := MarshalManifest(cloneManifest(m))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			n, err := cloneManifest(m).WriteTo(&got)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) || n != int64(len(want)) {
				t.Errorf("WriteTo wrote (%d bytes)\n%s\nwant (%d bytes)\n%s", n, got.String(), len(want), want)
			}
		})
	}
}

func cloneManifest(m *Manifest) *Manifest {
	c := *m
	return &c
}
