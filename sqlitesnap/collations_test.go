package sqlitesnap

import (
	"slices"
	"testing"
)

func TestCollationNames(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"CREATE TABLE t (a TEXT COLLATE appcoll PRIMARY KEY)", []string{"appcoll"}},
		{`CREATE TABLE t (a COLLATE "my coll", b collate [x y], c COLLATE ` + "`q``r`" + `, d COLLATE 'it''s')`, []string{"my coll", "x y", "q`r", "it's"}},
		{"CREATE INDEX i ON t (a COLLATE NoCase, b)", []string{"NoCase"}},
		{"CREATE TABLE t (a DEFAULT 'COLLATE fake', b) -- COLLATE notme\n", nil},
		{"CREATE VIEW v AS SELECT 1 /* COLLATE notme */ COLLATE real", []string{"real"}},
		{"CREATE TABLE t (a COLLATE", nil},
		{`CREATE TABLE t (a COLLATE "unended`, []string{`"unended`}}, // SQLite would not parse it
	} {
		if got := collationNames(tc.sql); !slices.Equal(got, tc.want) {
			t.Errorf("collationNames(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}
