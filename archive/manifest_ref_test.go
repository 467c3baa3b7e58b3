package archive

import "encoding/json"

// MarshalManifest is the plain encoding of a manifest: the reference that Manifest.WriteTo,
// which streams it, must match byte for byte.
func MarshalManifest(m *Manifest) ([]byte, error) {
	m.Schema = ManifestSchema
	return json.MarshalIndent(m, "", "  ")
}
