package backupset

import (
	"strings"
	"testing"
)

// FuzzParsePointer reads arbitrary bytes as LATEST: what it takes is one archive name of a
// set, which names a file in the set's folder and nothing else, and reads the same written
// back as create writes it.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{nameA + "\n", nameA, nameB + "-2\n", "../" + nameA, nameA + " \n", "\n", "x\x00.zip"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := parsePointer(data)
		if err != nil {
			return
		}
		switch {
		case name == "" || name == "." || name == "..":
			t.Fatalf("%q taken as %q", data, name)
		case strings.ContainsAny(name, "/\x00\n"), strings.Contains(name, ".."):
			t.Fatalf("%q taken as %q, which does not name a file in the folder", data, name)
		}
		if _, _, ok := parseName(name); !ok {
			t.Fatalf("%q taken as %q, not an archive name", data, name)
		}
		if again, err := parsePointer([]byte(name + "\n")); err != nil || again != name {
			t.Fatalf("%q written back reads %q, %v", name, again, err)
		}
	})
}
