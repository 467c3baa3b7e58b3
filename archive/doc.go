// Package archive writes and reads the zip archives of backup.
//
// A Writer compresses files in parallel and writes their entries in the order they were
// added, so that the archive is the same for the same tree whatever the number of workers.
// Each file is read once: CRC-32, SHA-256 and compression come from the same bytes. A file's
// entry is its whole content or absent, never truncated: entries are staged before they are
// written. The archive is written to a temp file beside its final path and appears there
// only once it is whole and synced (Commit); Abort removes every trace of it.
//
// The last entry of every archive is the manifest (ManifestName): every stored file with its
// size and SHA-256, and what the run skipped, excluded and warned about.
package archive
