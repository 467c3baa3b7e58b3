// Package backupset owns a backup set: its lock, its LATEST pointer and its retention.
//
// A set is a place that backup create writes into again and again (from cron or a timer): a
// folder, or a prefix in an S3 bucket. The rules are written once, over a small Store
// interface (create-once, compare-and-swap, list, ranged read, conditional delete, lock) that
// Folder implements here and s3store in a bucket. The package promises:
//
//   - One writer at a time. Everything that changes a set (activating a new archive, pruning
//     old ones) is a method of Lock, which holds the store's lock: an exclusive flock on
//     DIR/.backup.lock, or a lock object in the bucket.
//   - LATEST fails closed. Every reader goes through Latest, which refuses a pointer that is a
//     symlink, not a regular file, more than one line, a path rather than a name, or that names
//     an archive that is missing or whose receipt does not match it. No reader ever falls back
//     to "the newest file". Activate moves it only if it still holds what was read when
//     the lock was taken (the store's compare-and-swap), so a lost race fails closed too.
//   - Retention never eats the last good backup: the LATEST target and the newest complete
//     archive are never deleted, and only files with the tool's default archive names and a
//     readable receipt are ever deleted, each archive together with its receipt.
//
// The package does not read archives itself: the check that an archive is whole is passed in
// (a Verifier), so that the set logic does not depend on the archive reader.
package backupset
