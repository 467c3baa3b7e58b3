package sqlitesnap

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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

func TestGeneratedCalls(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"CREATE TABLE t (a, b AS (appfn(a)) NOT NULL)", []string{"appfn"}},
		{`CREATE TABLE t (a, b GENERATED ALWAYS AS (upper("my fn"(abs([x y](a), 'f(')))) STORED, c)`, []string{"upper", "my fn", "abs", "x y"}},
		{"CREATE TABLE t (a CHECK (f(a)), b DEFAULT (g(1)), c AS (a + 1))", nil},
		{"CREATE TABLE t (a, b AS (cast(a AS INTEGER)), c AS (h(a)))", []string{"cast", "h"}},
		{"CREATE TABLE t (a, b AS (f(a)) /* AS (notme(a)) */, c) -- AS (notme(a))\n", []string{"f"}},
		{"CREATE TABLE t (a, b AS (f(", []string{"f"}}, // SQLite would not parse it
		{"CREATE TABLE t (a, b AS (1 + 2(a)))", nil},
	} {
		if got := generatedCalls(tc.sql); !slices.Equal(got, tc.want) {
			t.Errorf("generatedCalls(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// TestStandInsLeaveConnectionsWorking: a schema written by hand (writable_schema) can name a
// function SQLite would refuse to register, its name over 255 bytes. Registered, it would
// fail the opening of every connection of the check. Empty names, and a collation's long
// one, SQLite takes. The stand-ins are the check's alone: a connection of the process's
// driver has none.
func TestStandInsLeaveConnectionsWorking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.db")
	db := openDB(t, path, "delete")
	long := strings.Repeat("f", 256)
	exec(t, db, "CREATE TABLE g (a, b AS (0))")
	exec(t, db, "PRAGMA writable_schema = ON")
	exec(t, db, fmt.Sprintf(`UPDATE sqlite_schema SET sql = 'CREATE TABLE g (a, b AS (%s(a)), c AS (standin_ok(a)) NOT NULL, d COLLATE %s, e COLLATE "", f AS (""(a)))' WHERE name = 'g'`, long, long))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fresh, err := openWithStandIns(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	var n int
	if err := fresh.QueryRow("SELECT standin_ok(1) + count(*) FROM sqlite_schema").Scan(&n); err != nil || n != 3 { // 1, t and g
		t.Fatalf("a connection opened after the stand-ins: %d, %v", n, err)
	}
	other, err := sql.Open("sqlite", uri(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.QueryRow("SELECT standin_ok(1)").Scan(&n); err == nil {
		t.Error("a connection of the process's driver has the check's stand-in standin_ok()")
	}
}

func TestModule(t *testing.T) {
	for text, want := range map[string]string{
		"CREATE VIRTUAL TABLE f USING fts5(body, tokenize = apptok)": "fts5",
		`CREATE VIRTUAL TABLE "using" USING "FTS5" (a)`:              "fts5",
		"CREATE VIRTUAL TABLE r USING rtree(id, a, b)":               "rtree",
		"CREATE VIRTUAL TABLE x USING\x00fts5(a)":                    "", // SQLite reads to the NUL
		"CREATE TABLE t (a)":                                         "",
	} {
		if got := module(text); got != want {
			t.Errorf("module(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestStandInsFoldCaseAsSQLite: SQLite folds the case of a name's ASCII letters only. Folded
// as Go folds Unicode, "LI\u212aE" (a Kelvin sign) was taken for SQLite's like(), and "\xfe"
// for "\xff" (each invalid UTF-8, folded to U+FFFD): neither got a stand-in, and the check
// of a sound database naming them failed, "unknown function", "no such collation sequence".
func TestStandInsFoldCaseAsSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fold.db")
	db := openDB(t, path, "delete")
	exec(t, db, "CREATE TABLE g (a)")
	exec(t, db, "CREATE INDEX gi ON g (a)")
	exec(t, db, "INSERT INTO g VALUES (1)")
	exec(t, db, "PRAGMA writable_schema = ON")
	exec(t, db, "UPDATE sqlite_schema SET sql = CAST(? AS TEXT) WHERE name = 'g'",
		[]byte("CREATE TABLE g (a, b AS (LI\u212aE(a)) NOT NULL, c AS (\xff(a)) NOT NULL, d AS (\xfe(a)) NOT NULL)"))
	exec(t, db, "UPDATE sqlite_schema SET sql = CAST(? AS TEXT) WHERE name = 'gi'", []byte("CREATE INDEX gi ON g (a COLLATE \xff, a COLLATE \xfe)"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check, err := openWithStandIns(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	var result string
	if err := check.QueryRow("PRAGMA quick_check").Scan(&result); err != nil || result != "ok" {
		t.Errorf("quick_check: %q, %v; want ok", result, err)
	}
}

// FuzzSchemaNames: a schema's text is whatever the database's writer put in sqlite_schema
// (writable_schema takes any bytes). Reading names from it never panics or loops, and
// yields no more names, and no longer ones, than the text holds.
func FuzzSchemaNames(f *testing.F) {
	for _, seed := range []string{
		"CREATE TABLE t (a, b AS (appfn(a)) NOT NULL)",
		`CREATE TABLE t (a COLLATE "my coll", b collate [x y], c COLLATE ` + "`q``r`" + `, d COLLATE 'it''s')`,
		"CREATE VIRTUAL TABLE f USING fts5(body, tokenize = apptok)",
		"CREATE TABLE t (a, b AS (f(", `CREATE TABLE t (a COLLATE "unended`, "/* AS (x(", "AS ((((", "AS ()))",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, names := range [][]string{generatedCalls(text), collationNames(text)} {
			total := 0
			for _, name := range names {
				total += len(name)
			}
			if len(names) > len(text) || total > len(text) {
				t.Fatalf("%d names, %d bytes, from %d bytes of text", len(names), total, len(text))
			}
		}
		if m := module(text); len(m) > len(text) {
			t.Fatalf("module %q from %q", m, text)
		}
	})
}
