package sqlitesnap

import (
	"bytes"
	"errors"
	"io"
	"strings"
)

// header is how every SQLite 3 database file begins.
var header = []byte(headerText)

const headerText = "SQLite format 3\x00"

// IsDatabase reports whether r begins like an SQLite 3 database. It reads 16 bytes at offset
// 0; a shorter file is not a database.
func IsDatabase(r io.ReaderAt) (bool, error) {
	buf := make([]byte, len(header))
	_, err := r.ReadAt(buf, 0)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return Begins(buf), nil
}

// Begins reports whether b, the first bytes of a file (all of them, if fewer), begin like
// an SQLite 3 database.
func Begins(b []byte) bool { return bytes.HasPrefix(b, header) }

// HeaderLen is how many first bytes of a file Begins needs to tell.
const HeaderLen = len(headerText)

// sidecarSuffixes are the files SQLite keeps beside a database while it is in use.
var sidecarSuffixes = []string{"-wal", "-shm", "-journal"}

// DatabaseOf returns the name of the database a sidecar file (NAME-wal, NAME-shm,
// NAME-journal) belongs to, and whether name is one. A sidecar always sorts after its
// database in the walk's byte order, since the database's name is a prefix of its own.
func DatabaseOf(name string) (string, bool) {
	for _, s := range sidecarSuffixes {
		if db, ok := strings.CutSuffix(name, s); ok && db != "" && !strings.HasSuffix(db, "/") {
			return db, true
		}
	}
	return "", false
}
