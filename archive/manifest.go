package archive

import "encoding/json"

// ManifestName is the name of the archive's last entry.
const ManifestName = ".backup-manifest.json"

// ManifestSchema names the version of the manifest's format.
const ManifestSchema = "backup.manifest/v1"

// Manifest is the content of the manifest entry: enough to verify the archive with nothing
// but the archive.
type Manifest struct {
	Schema      string     `json:"schema"`
	ToolVersion string     `json:"tool_version"`
	Status      string     `json:"status"`
	Files       []File     `json:"files"`
	Skipped     []Skipped  `json:"skipped"`
	Excluded    []Excluded `json:"excluded"`
	Warnings    []Warning  `json:"warnings"`
}

// File is one stored file: its stored name, size in bytes and SHA-256 in hex.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Skipped is a path that was not archived on purpose because it is not a regular file.
type Skipped struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Excluded is a path left out by a rule: a user pattern, CACHEDIR.TAG, one-file-system or self.
type Excluded struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
}

// Warning is a path that met a problem. Lost says whether data is missing from the archive.
type Warning struct {
	Path  string `json:"path"`
	Op    string `json:"op"`
	Error string `json:"error"`
	Lost  bool   `json:"lost"`
}

// MarshalManifest encodes m as the manifest entry's content.
func MarshalManifest(m *Manifest) ([]byte, error) {
	m.Schema = ManifestSchema
	return json.MarshalIndent(m, "", "  ")
}
