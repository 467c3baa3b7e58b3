// Package archive writes and reads the zip archives of backup.
//
// A Writer compresses files in parallel and writes their entries in the order they were
// added, so that the archive is the same for the same tree whatever the number of workers.
// A worker opens each file through the walker's Handle, relative to the directory the walk
// found it in (never by its path), and the Writer releases the Handle once the file is read.
// Each file is read once: CRC-32, SHA-256 and compression come from the same bytes. A file
// larger than a chunk (1 MiB) is split into chunks compressed in parallel and joined into
// one deflate stream; data that does not shrink is stored. The memory the pipeline holds is
// bounded by the number of workers whatever the size of the files; only the central
// directory grows with the tree. A file's entry is its whole content or absent, never
// truncated: entries are staged before they are written. The archive is written to a temp
// file beside its final path and appears there only once it is whole and synced (Commit,
// with its receipt as one unit); Abort removes every trace of it.
//
// The last entry of every archive is the manifest (format.ManifestName; its records and codec
// are package format's): every stored file with its size and SHA-256, and what the run
// skipped, excluded and warned about. Readers find it
// wherever it stands, so that an entry appended later cannot hide it. Names are stored byte
// for byte, each once (the Writer takes entries in walk order and refuses any other).
//
// Reading assumes every archive may be damaged or hostile. Open reads the directory and a
// manifest parsed strictly and bounded in size (an archive without one was made by another
// tool). Verify checks entries with a fixed number of workers, each streaming one entry at a
// time through its CRC-32 and SHA-256 in a buffer of its own, so its memory does not grow
// with the archive, and reports what it finds in archive order. CheckName and CheckNames say
// which stored names are safe to extract (relative, clean, unique, none below a
// non-directory).
//
// Where entries are extracted is package restore's; what it writes, verify would pass, and
// that is this package's API rather than a convention: an entry's data reach a caller only
// through Reader.CopyChecked, which checks them as verify does (size, CRC-32, and the record
// and SHA-256 the manifest holds), and Entry.CheckHeaders and Reader.CheckRecord give the
// verdict that needs no data before anything is made. This package never imports restore.
package archive
