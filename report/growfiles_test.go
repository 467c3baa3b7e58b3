package report

import (
	"testing"

	"backup/format"
)

// growFiles keeps the records it is given and makes room for n more, all of them zero.
func TestGrowFiles(t *testing.T) {
	files := []format.File{{Path: "a", Size: 1}, {Path: "b", Size: 2}}
	got := growFiles(files, 1000)
	if len(got) != 2 || got[0].Path != "a" || got[1].Path != "b" {
		t.Fatalf("growFiles changed the records: %+v", got)
	}
	if cap(got)-len(got) < 1000 {
		t.Fatalf("room for %d records, want at least 1000", cap(got)-len(got))
	}
	for i, f := range got[len(got):cap(got)] {
		if f.Path != "" || f.Size != 0 || f.Meta != nil {
			t.Fatalf("record %d of the room is not zero: %+v", i, f)
		}
	}
	if got := growFiles(nil, 0); len(got) != 0 {
		t.Fatalf("growFiles(nil, 0) = %d records", len(got))
	}
}
