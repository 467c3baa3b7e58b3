package format

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// FuzzParseManifest checks that the parser never panics, and that whatever it accepts
// holds to the manifest's rules and survives a round trip through MarshalManifest.
func FuzzParseManifest(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := m.check(); err != nil {
			t.Fatalf("accepted a manifest that breaks a rule: %v", err)
		}
		out, err := MarshalManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseManifest(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("own output rejected: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again.Files, m.Files) || !reflect.DeepEqual(again.Dirs, m.Dirs) ||
			!reflect.DeepEqual(again.Symlinks, m.Symlinks) || !slices.Equal(again.Skipped, m.Skipped) || again.Status != m.Status {
			t.Fatalf("round trip changed the manifest: %+v, then %+v", m, again)
		}
	})
}
