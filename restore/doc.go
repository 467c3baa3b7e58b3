// Package restore extracts an archive into a destination folder (DEST), safely, and
// undoes such a restore.
//
// NewPlan checks a restore before anything is written: names that are unsafe or appear
// twice, entries below a non-directory, paths through a symlink or a file in DEST, a file
// where DEST has a folder or the reverse, files that exist with other content (conflicts,
// which only Options.Force replaces), and those DEST holds already with the recorded size
// and SHA-256, which are kept, so that a re-run writes only what is missing; it fails with a
// *SetFolderError when a folder of DEST it would pass through is a backup set's
// (Options.SetMarker). Plan.Run then carries it out. It promises:
//
//   - Nothing is written outside DEST: folders are opened one component at a time, relative
//     to the folder above, never following a symlink, and each is checked to be still at its
//     name before a file is linked or renamed into it, so a folder moved or swapped for a symlink
//     during the restore receives nothing more.
//   - Each file gets its name only once its data are checked: it is written, unnamed
//     (O_TMPFILE) or to a temp file beside its name, through archive.Reader.CopyChecked,
//     which checks it as verify does (size, CRC-32, and the record and SHA-256 the manifest
//     holds), so what a restore writes, verify would pass. Data that fail a check are never
//     written, nor their temp file left.
//   - What Options.Force replaces is what the plan saw there, and nothing put there since:
//     the name is exchanged atomically (where the file system can) and what came out is
//     checked against the plan's record. A name is replaced, never written through.
//   - Temp files are recorded in a journal in DEST's top folder before they are made; the
//     next restore into DEST removes the temp files of a killed run only as its journal
//     proves them (this user's, no live run holding it, the run's own token in each name).
//   - Stored symlinks are created as they are, never followed; hard-link groups are linked
//     again, or left as copies with a warning. As root, owners are restored; setuid, setgid
//     and sticky bits only with Options.SamePermissions and the owner (a folder's sticky bit
//     always: it only restricts); extended attributes
//     with Options.Xattrs; folders get their mode and mtime last, each after all below it.
//
// LockDest takes an exclusive flock on DEST's own folder descriptor, through which
// NewPlan reads and Run writes (Options.Lock): two restores into one folder, by whatever
// path, never interleave; the second gets a *BusyError before it reads anything.
//
// A restore that may be undone leaves a before-state: an archive of what it replaces
// (Plan.Replaces), whose manifest lists what it creates (Plan.Creates), written by the
// caller before Run. Restoring that archive puts back the one and removes the other, each
// created path only while it still holds what the undone restore wrote.
//
// Problems with single entries are data in the Result (Damaged: the archive's, Failed:
// DEST's, Warnings: restored less faithfully); an error is returned only for what stops the
// restore (a full disk, a read-only file system, ctx done). The package imports archive
// (its reader and checked-copy surface), format (the manifest's records) and skiprules (for
// the symlink Kind an archive.Entry carries), never the command or the writer.
package restore
