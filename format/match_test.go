package format

import "testing"

// TestMatch: an archive is its receipt's when its size and then its SHA-256 are the ones
// recorded; the size is named first, since a file of another size is another file.
func TestMatch(t *testing.T) {
	want := Summary{Size: 4, SHA256: goodSum}
	tests := []struct {
		name    string
		got     Summary
		wantErr string
	}{
		{"same", want, ""},
		{"other size", Summary{Size: 5, SHA256: "x"}, "archive is 5 bytes, the receipt says 4"},
		{"other sha256", Summary{Size: 4, SHA256: "x"}, "archive sha256 does not match the receipt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(want.Match(tt.got)); got != tt.wantErr {
				t.Errorf("Match = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestReceiptSummary: a receipt's summary is its archive's size and SHA-256, and there is
// none when it records no archive.
func TestReceiptSummary(t *testing.T) {
	rc := &Receipt{Archive: &ArchiveInfo{Path: "/set/a.zip", Size: 4, SHA256: goodSum}}
	if got, ok := rc.Summary(); !ok || got != (Summary{Size: 4, SHA256: goodSum}) {
		t.Errorf("Summary() = %+v, %v", got, ok)
	}
	if got, ok := (&Receipt{Status: Failed}).Summary(); ok {
		t.Errorf("Summary() of a failed run = %+v, true", got)
	}
}

// TestMatchListed: a set's listing holds a receipt to the file beside it by name and size.
func TestMatchListed(t *testing.T) {
	rc := &Receipt{Archive: &ArchiveInfo{Path: "/elsewhere/a.zip", Size: 4}}
	tests := []struct {
		name    string
		rc      *Receipt
		file    string
		present bool
		size    int64
		wantErr string
	}{
		{"match", rc, "a.zip", true, 4, ""},
		{"receipt alone", rc, "a.zip", false, 0, ""},
		{"failed run alone", &Receipt{Status: Failed}, "a.zip", false, 0, ""},
		{"failed run beside a file", &Receipt{Status: Failed}, "a.zip", true, 4, "its receipt says no archive was written"},
		{"other name", rc, "b.zip", true, 4, "its receipt describes another archive, a.zip"},
		{"other size", rc, "a.zip", true, 5, "its receipt says 4 bytes, the archive has 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(tt.rc.MatchListed(tt.file, tt.present, tt.size)); got != tt.wantErr {
				t.Errorf("MatchListed = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestStatusProven: a receipt's status stands only when the manifest its archive holds
// records the same one, except a failed verdict, which is later than the manifest.
func TestStatusProven(t *testing.T) {
	tests := []struct {
		name        string
		status      Status
		hasManifest bool
		recorded    string
		wantErr     string
	}{
		{"same", Complete, true, "complete", ""},
		{"failed stands", Failed, true, "complete", ""},
		{"no manifest", Complete, false, "", "the archive has no manifest (not made by backup), so its status cannot be proven"},
		{"edited", Complete, true, "incomplete", "its receipt says complete, but the manifest inside the archive says incomplete (the receipt was edited?)"},
		{"foreign status", Incomplete, true, "ok\n", `its receipt says incomplete, but the manifest inside the archive says "ok\n" (the receipt was edited?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &Receipt{Status: tt.status}
			if got := errText(rc.StatusProven("its receipt", tt.hasManifest, tt.recorded)); got != tt.wantErr {
				t.Errorf("StatusProven = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
