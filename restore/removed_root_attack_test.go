package restore

import (
	"os"
	"strings"
	"testing"
)

// TestAttackRemovedRootWordedAsKernel: DEST itself is removed (rm -r DEST) while the restore
// holds it open, before its second file: the files after fail as the destination moved or
// replaced, not as the kernel's refusal ("y: create temp file: operation not permitted",
// which a first removedDir, leaving DEST out, still gave; attack pass 22).
func TestAttackRemovedRootWordedAsKernel(t *testing.T) {
	dest := t.TempDir()
	entries := []zent{{name: "a/"}, {name: "a/x", body: "x"}, {name: "y", body: "y"}, {name: "z", body: "z"}}
	defer func(open func(int, uint32) (int, error)) { openUnnamed = open }(openUnnamed)
	real, calls := openUnnamed, 0
	openUnnamed = func(dfd int, perm uint32) (int, error) {
		if calls++; calls == 2 { // y
			if err := os.RemoveAll(dest); err != nil {
				t.Fatal(err)
			}
		}
		return real(dfd, perm)
	}
	r := openZip(t, buildZip(t, entries, true))
	plan, err := NewPlan(t.Context(), r, dest, Options{Jobs: 1})
	if err != nil || !plan.OK() {
		t.Fatalf("NewPlan: %v", err)
	}
	res, err := plan.Run(t.Context())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	failed := problemStrings(res.Failed)
	for _, name := range []string{"y", "z"} {
		found := false
		for _, f := range failed {
			if strings.HasPrefix(f, name+": ") {
				found = true
				if !strings.Contains(f, "moved or replaced") {
					t.Errorf("%q: want DEST's removal worded as moved or replaced, not the kernel's refusal", f)
				}
			}
		}
		if !found {
			t.Errorf("%s did not fail: failed %q", name, failed)
		}
	}
}
