package s3store

import "testing"

// TestNameOfOwnsOnlyDirectKeys: a set owns the keys directly under its prefix, never those
// of a deeper set nor (from a server that answers for more than it was asked) keys outside
// the prefix; a set at the bucket's root owns only the root's keys.
func TestNameOfOwnsOnlyDirectKeys(t *testing.T) {
	tests := []struct {
		prefix, key, want string
		owned             bool
	}{
		{"app/", "app/src-20250101T000000Z.zip", "src-20250101T000000Z.zip", true},
		{"app/", "app/LATEST", "LATEST", true},
		{"app/", "app/sub/big-20250101T000000Z.zip", "", false},
		{"app/", "app/", "", false},
		{"app/", "apple/src-20250101T000000Z.zip", "", false},
		{"app/", "other/app/src-20250101T000000Z.zip", "", false},
		{"", "src-20250101T000000Z.zip", "src-20250101T000000Z.zip", true},
		{"", "app/src-20250101T000000Z.zip", "", false},
	}
	for _, tt := range tests {
		s := &Store{prefix: tt.prefix}
		if got, owned := s.nameOf(tt.key); got != tt.want && tt.owned || owned != tt.owned {
			t.Errorf("prefix %q: nameOf(%q) = %q, %v; want %q, %v", tt.prefix, tt.key, got, owned, tt.want, tt.owned)
		}
	}
}
