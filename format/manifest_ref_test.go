package format

import "encoding/json"

// MarshalManifest is the plain encoding of a manifest: the reference that Manifest.WriteTo,
// which streams it, must match byte for byte but for the line breaks between records.
func MarshalManifest(m *Manifest) ([]byte, error) {
	m.Schema = ManifestSchema
	return json.Marshal(m)
}

// digest is the Digest of a SHA-256 written in hex.
func digest(hexSum string) Digest {
	var d Digest
	if err := d.UnmarshalText([]byte(hexSum)); err != nil {
		panic(err)
	}
	return d
}
