package archive

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

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

// File is one stored file: its stored name, size in bytes and SHA-256 in hex; for a file
// stored as a consistent copy made from it (a database snapshot), what it was copied from.
type File struct {
	Path     string      `json:"path"`
	Size     int64       `json:"size"`
	SHA256   string      `json:"sha256"`
	Snapshot *CopySource `json:"snapshot,omitempty"`
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

// MaxManifestSize is the largest manifest a reader accepts, in bytes: about three million
// files. A hostile archive could otherwise make the reader hold any amount in memory.
const MaxManifestSize = 512 << 20

// ParseManifest reads a manifest strictly: the schema must be ManifestSchema, no field may
// be unknown, nothing may follow the JSON, and every file must have a name, a size and a
// well-formed SHA-256, once. It reads at most MaxManifestSize bytes.
func ParseManifest(r io.Reader) (*Manifest, error) {
	return parseManifest(r, MaxManifestSize)
}

func parseManifest(r io.Reader, limit int64) (*Manifest, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	// The lists are decoded as their JSON records, then turned into values: so the decoder
	// holds them to DisallowUnknownFields, and a million files are not each decoded twice
	// more by File.UnmarshalJSON.
	var wire struct {
		Manifest
		Files    []fileJSON     `json:"files"`
		Skipped  []skippedJSON  `json:"skipped"`
		Excluded []excludedJSON `json:"excluded"`
		Warnings []warningJSON  `json:"warnings"`
	}
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
	m, err := wire.Manifest, error(nil)
	m.Files, err = values(wire.Files, fileJSON.value)
	if err == nil {
		m.Skipped, err = values(wire.Skipped, skippedJSON.value)
	}
	if err == nil {
		m.Excluded, err = values(wire.Excluded, excludedJSON.value)
	}
	if err == nil {
		m.Warnings, err = values(wire.Warnings, warningJSON.value)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	return &m, nil
}

func (m *Manifest) check() error {
	if m.Schema != ManifestSchema {
		return fmt.Errorf("schema %q, want %q", m.Schema, ManifestSchema)
	}
	if m.Status != "complete" && m.Status != "incomplete" {
		return fmt.Errorf("status %q, want complete or incomplete", m.Status)
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		switch {
		case f.Path == "":
			return errors.New("a file has no path")
		case seen[f.Path]:
			return fmt.Errorf("file %q is listed twice", f.Path)
		case f.Size < 0:
			return fmt.Errorf("file %q has size %d", f.Path, f.Size)
		case !isHexSHA256(f.SHA256):
			return fmt.Errorf("file %q has sha256 %q, want 64 lowercase hex digits", f.Path, f.SHA256)
		}
		seen[f.Path] = true
	}
	return nil
}

func isHexSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
