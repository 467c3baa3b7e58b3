package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSpliceSeal: -only seal replaces the encryption rows and section of an existing report,
// puts a section that was not there before the profile, and leaves the rest as it was.
func TestSpliceSeal(t *testing.T) {
	r := reuseReport(t, map[string]float64{sealPlain: 3, sealCreate: 3.2, sealVerifyPlain: 1, sealVerify: 1.3},
		"seal_s3_encrypted=1428076 0.1330", "seal_s3_plain=1165712 0.1086")
	old := "# Benchmarks\n\n## Targets\n\n| measure | target | measured | met |\n| --- | --- | --- | --- |\n" +
		"| default level | ≤ 0.20 | 0.3 | **no** |\n| seal: old row | x | y | z |\n\n## Reuse\n\nreuse text\n\n## Where the time goes\n\nprofile\n"
	var out bytes.Buffer
	if err := r.spliceSeal([]byte(old), &out); err != nil {
		t.Fatal(err)
	}
	doc := out.String()
	rows := targetRows(doc, sealPrefix)
	want := []string{"yes", "**no**", "yes"}
	if len(rows) != len(want) {
		t.Fatalf("encryption rows %q", rows)
	}
	for i, row := range rows {
		if !strings.HasSuffix(row, "| "+want[i]+" |") {
			t.Errorf("row %q, want met %s", row, want[i])
		}
	}
	if !strings.Contains(doc, "| default level | ≤ 0.20 |") || !strings.Contains(doc, "reuse text") {
		t.Errorf("the rest of the report changed:\n%s", doc)
	}
	if i, j := strings.Index(doc, sealHeading), strings.Index(doc, "## Where the time goes"); i < 0 || i > j || !strings.Contains(doc, "encrypted 0.133% (1.43 MB)") {
		t.Errorf("the section is missing or misplaced:\n%s", doc)
	}
}
