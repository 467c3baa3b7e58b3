package sqlitesnap

import (
	"strings"
	"testing"
)

func TestIsDatabase(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{"SQLite format 3\x00", true},
		{"SQLite format 3\x00rest of the page", true},
		{"SQLite format 3", false}, // 15 bytes
		{"SQLite format 3 ", false},
		{"sqlite format 3\x00", false},
		{"", false},
	} {
		got, err := IsDatabase(strings.NewReader(tc.data))
		if err != nil || got != tc.want {
			t.Errorf("IsDatabase(%q) = %v, %v; want %v", tc.data, got, err, tc.want)
		}
	}
}

func TestDatabaseOf(t *testing.T) {
	for _, tc := range []struct {
		name, db string
		ok       bool
	}{
		{"app/x.db-wal", "app/x.db", true},
		{"app/x.db-shm", "app/x.db", true},
		{"app/x.db-journal", "app/x.db", true},
		{"state-wal", "state", true},
		{"app/-wal", "", false},
		{"-wal", "", false},
		{"app/x.db", "", false},
		{"app/x.db-wal.bak", "", false},
	} {
		db, ok := DatabaseOf(tc.name)
		if db != tc.db || ok != tc.ok {
			t.Errorf("DatabaseOf(%q) = %q, %v; want %q, %v", tc.name, db, ok, tc.db, tc.ok)
		}
	}
}
