package format

import "testing"

// TestJournalToken: a journal's name is the prefix, 1 to 13 base-36 digits, the suffix;
// nothing else is one.
func TestJournalToken(t *testing.T) {
	tests := []struct {
		name, token string
		ok          bool
	}{
		{".backup-restore-1gt0jjfpyjt7g.journal", "1gt0jjfpyjt7g", true},
		{".backup-restore-0.journal", "0", true},
		{".backup-restore-1gt0jjfpyjt7g0.journal", "", false}, // 14 digits: more than 64 bits
		{".backup-restore-.journal", "", false},
		{".backup-restore-x.y.journal", "", false},
		{".backup-restore-ABC.journal", "", false},
		{"app/.backup-restore-abc.journal", "", false},
		{"abc.journal", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if token, ok := JournalToken(tt.name); token != tt.token || ok != tt.ok {
				t.Errorf("JournalToken(%q) = %q, %v; want %q, %v", tt.name, token, ok, tt.token, tt.ok)
			}
		})
	}
}
