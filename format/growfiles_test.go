package format

import (
	"fmt"
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

// GrowFiles never writes to the array of the list it is given: a shorter slice of a longer
// list has live records in its room (attack pass: touching them in place cleared a byte of
// a record's path).
func TestGrowFilesLeavesLiveRoomAlone(t *testing.T) {
	full := make([]File, 100)
	for i := range full {
		full[i] = File{Path: fmt.Sprintf("path-%03d", i), Size: int64(i), Meta: &Meta{UID: uint32(i)}}
	}
	got := GrowFiles(full[:1], 10)
	for i := range full {
		if full[i].Path != fmt.Sprintf("path-%03d", i) || full[i].Meta == nil || full[i].Meta.UID != uint32(i) {
			t.Fatalf("record %d of the list given changed: %+v", i, full[i])
		}
	}
	if len(got) != 1 || got[0].Path != "path-000" {
		t.Fatalf("GrowFiles gave %d records, the first %+v", len(got), got[0])
	}
	for i, f := range got[len(got):cap(got)] {
		if f != (File{}) {
			t.Fatalf("room record %d is not zero: %+v", i, f)
		}
	}
}
