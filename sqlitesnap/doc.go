// Package sqlitesnap turns a live SQLite database into a consistent copy for the archive: it
// recognises a database by its first 16 bytes, takes the copy with SQLite's online backup
// API in one step from a read-only connection, stages it as a temp file in the output folder,
// checks it with PRAGMA quick_check, and hands it on as an open, unlinked file. It fails
// closed: a database it cannot copy consistently is an error, never its raw bytes.
//
// SQLite opens a database by path, while the walk opens files relative to their directory's
// descriptor. So the path given to SQLite goes through that descriptor
// (/proc/self/fd/N/NAME), and the file at NAME is checked to be the one the walk opened
// (same device and inode) before SQLite opens it and again after the copy. SQLite resolves
// that path to the directory's name and opens by that name, so the name it read from is
// checked after the copy as well (checkOpened).
package sqlitesnap
