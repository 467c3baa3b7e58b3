package archive

import (
	"encoding/json"

	"backup/format"
)

// goodSum is the SHA-256 of "test".
const goodSum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// MarshalManifest is the plain encoding of a manifest, as format's tests hold
// Manifest.WriteTo to it: for building archives with a manifest of a test's choosing.
func MarshalManifest(m *format.Manifest) ([]byte, error) {
	m.Schema = format.ManifestSchema
	return json.Marshal(m)
}

// digest is the Digest of a SHA-256 written in hex.
func digest(hexSum string) format.Digest {
	var d format.Digest
	if err := d.UnmarshalText([]byte(hexSum)); err != nil {
		panic(err)
	}
	return d
}
