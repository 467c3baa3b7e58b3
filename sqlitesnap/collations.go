package sqlitesnap

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// An application may define its own collations (Android's LOCALIZED, an app's NOCASE_UTF8)
// and use them in its tables' keys and indexes. SQLite needs a collation by that name to
// prepare PRAGMA quick_check over such a table, and fails without one: a sound copy would be
// lost every run. quick_check does not check the order of an index or a key (integrity_check
// does), so any collation will do: each one the copy's schema names that SQLite lacks is
// registered, for the process, as byte order. It is used by nothing but checks.

// maxCollations bounds how many collations a run registers, which stay for the process: a
// schema could name a million.
const maxCollations = 1000

var collations = struct {
	sync.Mutex
	names map[string]bool // lower case
}{names: map[string]bool{"binary": true, "nocase": true, "rtrim": true}}

// registerCollations registers byte order for each collation the schema of the staged copy
// names that is not registered yet.
func registerCollations(ctx context.Context, stage string) error {
	db, err := sql.Open("sqlite", uri(stage, "mode=ro", "immutable=1"))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			return err
		}
		for _, name := range collationNames(text) {
			registerCollation(name)
		}
	}
	return rows.Err()
}

func registerCollation(name string) {
	collations.Lock()
	defer collations.Unlock()
	key := strings.ToLower(name)
	if collations.names[key] || len(collations.names) >= maxCollations {
		return
	}
	collations.names[key] = true
	// An error says the driver has one by that name already: then it is there.
	sqlite.RegisterCollationUtf8(name, strings.Compare)
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
