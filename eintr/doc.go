// Package eintr makes the file system calls of the walk, of restore, of the publishing of
// outputs and of the sets, repeating one that a signal cut short (EINTR), as Go's os
// package repeats its own. On local file systems these calls are never cut short; on CIFS
// (SMB) and FUSE mounts they can be, and the Go runtime's own preemption signals are enough
// to do it (restic#2659, golang/go#40846). The module makes these calls only through this
// package: TestCallsCutShortGoThroughEintr fails on any other.
//
// A call that reads, or sets what is already decided (a mode, an owner, a time, a lock), is
// repeated as it is. A call that changes a name may have been done by the server before it
// was cut short, when a blind repeat would fail, or undo an exchange:
//   - one that makes a name (a create with O_EXCL, a temp file or folder, a symlink) is
//     repeated, and a repeat that finds the name taken looks at it: an empty file, or a
//     symlink to the target asked, of this user's, is what the cut try made, and is removed
//     and made again (up to 10 times); an empty folder of this user's is taken as made;
//     anything else is someone's (EEXIST);
//   - one that gives a file a name (a link, a rename, an exchange) takes the file's identity,
//     and a try cut short after which the name holds that file was done: it is not repeated;
//   - one that removes a name takes the name found gone by a repeat as removed.
//
// Closing a descriptor is never repeated: Linux frees it even when the close is cut short.
package eintr
