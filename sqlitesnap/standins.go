package sqlitesnap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync/atomic"

	"modernc.org/sqlite"
)

// An application may define its own collations (Android's LOCALIZED, an app's NOCASE_UTF8)
// and use them in its tables' keys and indexes, and its own functions, which its tables'
// generated columns may compute. SQLite needs a collation, and a function, by each name to
// prepare PRAGMA quick_check over such a table, and fails without one: a sound copy would be
// lost every run. Neither is what the check is for: quick_check does not check the order of
// an index or a key (integrity_check does), and a virtual generated column is computed, not
// stored, so its value says nothing of the copy's pages. So for each one the copy's schema
// names that SQLite lacks, a stand-in is registered, for its check alone: byte order for a
// collation, and for a function one that returns 1 (a value that a NOT NULL column takes,
// and a column of any type but a STRICT table's BLOB; and unlike 0, a divisor: x / f(a) is
// NULL for 0). They are used by nothing but checks.

// maxStandIns bounds how many collations, and how many functions, the check of one
// database registers: a schema could name a million.
const maxStandIns = 1000

// maxRunStandIns bounds how many stand-ins a process registers in all, each of which the
// driver keeps for the process (some 120 bytes): a tree could hold a million databases that
// each name 2,000. It takes 50 such databases to spend it.
const maxRunStandIns = 100_000

var runStandIns atomic.Int64

// spendStandIn reports whether one more stand-in is within maxRunStandIns, counting it.
func spendStandIn() bool {
	if runStandIns.Add(1) > maxRunStandIns {
		runStandIns.Add(-1)
		return false
	}
	return true
}

// checkDriver opens connections with the stand-ins of one check only. Registered with the
// driver every connection of the process comes from, a stand-in stayed for the run, and each
// database's took from a bound shared by all: one database naming 1,000 functions left none
// for the databases after it, which were lost. (The driver keeps what a name needs, some 120
// bytes, for the process: a check's are not freed.)
type checkDriver struct {
	d    *sqlite.Driver
	name string
}

func (c checkDriver) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.name) }
func (c checkDriver) Driver() driver.Driver                        { return c.d }

// openWithStandIns opens the staged copy, read-only and immutable, through a driver of its
// own with a stand-in for each collation and function its schema names that SQLite lacks.
func openWithStandIns(ctx context.Context, stage string) (*sql.DB, error) {
	c := checkDriver{new(sqlite.Driver), uri(stage, "mode=ro", "immutable=1")}
	if err := registerStandIns(ctx, c); err != nil {
		return nil, err
	}
	// A connection has what its driver had when it was opened: this pool is new.
	return sql.OpenDB(c), nil
}

// registerStandIns registers with c's driver a stand-in for each collation and function the
// schema of its database names that SQLite does not have.
func registerStandIns(ctx context.Context, c checkDriver) error {
	db := sql.OpenDB(c)
	defer db.Close()
	known, err := knownFunctions(ctx, db)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL")
	if err != nil {
		return err
	}
	defer rows.Close()
	builtin := map[string]bool{"binary": true, "nocase": true, "rtrim": true}
	collations, functions := map[string]bool{}, map[string]bool{} // lower case, as SQLite compares them
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			return err
		}
		// The driver hands a stand-in's name to SQLite as a C string: a name read past a
		// NUL ("count\x00x") would replace SQLite's own function by its head.
		text = upToNUL(text)
		for _, name := range collationNames(text) {
			if key := foldName(name); !builtin[key] && !collations[key] && len(collations) < maxStandIns && spendStandIn() {
				collations[key] = true
				c.d.RegisterCollationUtf8(name, strings.Compare)
			}
		}
		for _, name := range generatedCalls(text) {
			// SQLite refuses a function's name longer than 255 bytes, and the driver, which
			// registers each function on every connection it opens, would then open none.
			if key := foldName(name); len(name) <= 255 && !known[key] && !functions[key] && len(functions) < maxStandIns && spendStandIn() {
				functions[key] = true
				c.d.RegisterDeterministicScalarFunction(name, -1, one)
			}
		}
	}
	return rows.Err()
}

// knownFunctions returns the lower-case names of the functions a connection has: SQLite's
// own. A stand-in by one of those names would take the place of SQLite's function for the
// arities it lacks.
func knownFunctions(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT name FROM pragma_function_list")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	known := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		known[foldName(name)] = true
	}
	return known, rows.Err()
}

// foldName returns name with its ASCII letters in lower case, as SQLite compares names: Go's
// strings.ToLower (and strings.Map) also folds a Kelvin sign to "k", and every invalid byte
// to U+FFFD, which would take names SQLite tells apart for one.
func foldName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func one(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) { return int64(1), nil }

// generatedCalls returns the names of the functions that generated columns' expressions,
// AS ( ... ), call: a word or quoted name followed by "(".
func generatedCalls(text string) []string {
	var names []string
	toks := sqlTokens(text)
	for i := 0; i+1 < len(toks); i++ {
		if !strings.EqualFold(toks[i], "as") || toks[i+1] != "(" {
			continue
		}
		depth := 0
		for i++; i < len(toks); i++ {
			switch toks[i] {
			case "(":
				depth++
			case ")":
				depth--
			default:
				if i+1 < len(toks) && toks[i+1] == "(" && isName(toks[i]) {
					names = append(names, unquote(toks[i]))
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return names
}

// upToNUL returns a schema's SQL text as SQLite reads it: a C string, to its first NUL.
func upToNUL(text string) string {
	if i := strings.IndexByte(text, 0); i >= 0 {
		return text[:i]
	}
	return text
}

// isName reports whether a token of sqlTokens is a word or a quoted name, not a string
// literal or punctuation.
func isName(tok string) bool {
	c := tok[0]
	return c != '\'' && (c == '"' || c == '`' || c == '[' || c == '_' || c == '$' || c >= 0x80 ||
		c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// collationNames returns the names that follow the keyword COLLATE in the SQL text, as
// written or in their quotes ("", [], “, ”). It reads no string literals' insides as
// keywords.
func collationNames(text string) []string {
	var names []string
	toks := sqlTokens(text)
	for i := 0; i+1 < len(toks); i++ {
		if strings.EqualFold(toks[i], "collate") {
			names = append(names, unquote(toks[i+1]))
		}
	}
	return names
}

// sqlTokens splits SQL text into words, quoted names and strings (each one token, quotes
// kept), and single punctuation characters; spaces and comments go.
func sqlTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(s[i:], "--"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case c == '"' || c == '\'' || c == '`' || c == '[':
			closing := c
			if c == '[' {
				closing = ']'
			}
			j := i + 1
			for j < len(s) {
				if s[j] == closing {
					if closing != ']' && j+1 < len(s) && s[j+1] == closing { // a doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c == '$':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 0x80) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			toks = append(toks, s[i:i+1])
			i++
		}
	}
	return toks
}

// unquote returns a quoted name's inside, a doubled quote in it single.
func unquote(tok string) string {
	if len(tok) >= 2 {
		switch q := tok[0]; q {
		case '"', '\'', '`':
			if tok[len(tok)-1] == q {
				return strings.ReplaceAll(tok[1:len(tok)-1], string([]byte{q, q}), string(q))
			}
		case '[':
			if tok[len(tok)-1] == ']' {
				return tok[1 : len(tok)-1]
			}
		}
	}
	return tok
}
