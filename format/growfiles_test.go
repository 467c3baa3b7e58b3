package format

import (
	"testing"
)

// GrowFiles keeps the records it is given and makes room for n more, all of them zero.
func TestGrowFiles(t *testing.T) {
	files := []File{{Path: "a", Size: 1}, {Path: "b", Size: 2}}
	got := GrowFiles(files, 1000)
	if len(got) != 2 || got[0].Path != "a" || got[1].Path != "b" {
		t.Fatalf("GrowFiles changed the records: %+v", got)
	}
	if cap(got)-len(got) < 1000 {
		t.Fatalf("room for %d records, want at least 1000", cap(got)-len(got))
	}
	for i, f := range got[len(got):cap(got)] {
		if f.Path != "" || f.Size != 0 || f.Meta != nil {
			t.Fatalf("record %d of the room is not zero: %+v", i, f)
		}
	}
	if got := GrowFiles(nil, 0); len(got) != 0 {
		t.Fatalf("GrowFiles(nil, 0) = %d records", len(got))
	}
}
