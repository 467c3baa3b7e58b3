// Package backupset owns a backup set folder: its lock, its LATEST pointer and its retention.
//
// A set is a folder that backup create writes into again and again (from cron or a timer).
// The package promises:
//
//   - One writer at a time. Everything that changes a set (activating a new archive, pruning
//     old ones) is a method of Lock, which holds an exclusive flock on DIR/.backup.lock.
//   - LATEST fails closed. Every reader goes through Latest, which refuses a pointer that is a
//     symlink, not a regular file, more than one line, a path rather than a name, or that names
//     an archive that is missing or whose receipt does not match it. No reader ever falls back
//     to "the newest file".
//   - Retention never eats the last good backup: the LATEST target and the newest complete
//     archive are never deleted, and only files with the tool's default archive names and a
//     readable receipt are ever deleted, each archive together with its receipt.
//
// The package does not read archives itself: the check that an archive is whole is passed in
// (a Verifier), so that the set logic does not depend on the archive reader.
package backupset
