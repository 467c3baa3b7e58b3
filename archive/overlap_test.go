package archive

import (
	"strings"
	"testing"
)

// TestOverlapping: restore's check finds both entries of an overlap from the central
// directory alone, and none in an archive whose entries lie end to end.
func TestOverlapping(t *testing.T) {
	if got := openZip(t, plainZip(t)).Overlapping(); len(got) != 0 {
		t.Errorf("plain zip: %v", got)
	}
	r := openZip(t, overlapZip())
	got := r.Overlapping()
	if len(got) != 2 {
		t.Fatalf("overlapping %v, want a.txt and b.txt", got)
	}
	for _, e := range r.Entries {
		if err := got[e]; err == nil || !strings.Contains(err.Error(), "overlaps the entry") {
			t.Errorf("%s: %v", e.Name, err)
		}
	}
}
