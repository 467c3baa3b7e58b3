// Package eintr makes the file system calls of restore, of the publishing of outputs and of
// the sets, repeating one that a signal cut short (EINTR), as Go's os package repeats its
// own. On local file systems these calls are never cut short; on CIFS (SMB) and FUSE mounts
// they can be, and the Go runtime's own preemption signals are enough to do it (restic#2659,
// golang/go#40846). Outside the walker, which repeats its own, the module makes these calls
// only through this package: TestCallsCutShortGoThroughEintr fails on any other.
//
// A call that reads, or sets what is already decided (a mode, an owner, a time, a lock), is
// repeated as it is. A call that changes a name may have been done by the server before it
// was cut short, when a blind repeat would fail, or undo an exchange:
//   - one that makes a name (a create with O_EXCL, a folder, a symlink) is repeated, and when
//     a repeat finds the name taken its error matches ErrCut as well as EEXIST, for the
//     caller to tell a name it may have made from someone else's;
//   - one that gives a file a name (a link, a rename, an exchange) takes the file's identity,
//     and a try cut short after which the name holds that file was done: it is not repeated;
//   - one that removes a name takes the name found gone by a repeat as removed.
//
// Closing a descriptor is never repeated: Linux frees it even when the close is cut short.
package eintr
