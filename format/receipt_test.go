package format

import (
	"strings"
	"testing"
)

// TestReceiptTwinsReadBack: a receipt read back holds its paths as text, so Marshal keeps the
// twins read with them while they still show as that text, and drops the archive's when its
// path was changed since (adopt names its copy in the set).
func TestReceiptTwinsReadBack(t *testing.T) {
	rc := &Receipt{Schema: ReceiptSchema, Status: Complete, Sources: []string{"/s/app", "/s/b\xff"},
		Archive: &ArchiveInfo{Path: "/o/a\xff.zip", Size: 1, SHA256: "00"}}
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseReceipt("r.json", data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("read back and written again:\n%s\nwant\n%s", again, data)
	}
	moved := *back.Archive
	moved.Path = "/set/app-20261202T000000Z.zip"
	back.Archive = &moved
	data, err = back.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"path_b64"`) || !strings.Contains(string(data), `"sources_b64": [`) {
		t.Errorf("the archive's path changed after reading; written:\n%s\nwant no path_b64, and the sources' twins kept", data)
	}
}
