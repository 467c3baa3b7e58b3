// Package walker walks source trees in a stable order and hands on one Entry per path it
// meets, with its lstat result or the error that lstat gave.
//
// The root is resolved once, following its symlinks (the user named it). Below it, nothing
// is ever looked up by a path: each directory is opened with O_DIRECTORY|O_NOFOLLOW relative
// to the directory above, checked to be the directory lstat saw (device and inode), and its
// entries are stat'ed (fstatat, AT_SYMLINK_NOFOLLOW) and opened (openat, O_NOFOLLOW)
// relative to it. So a directory renamed or swapped for a symlink while the walk runs is
// either still read as the directory it was, or reported, never followed out of the tree;
// and paths longer than PATH_MAX are walked like any other. A file is opened later, on
// another goroutine, through a Handle that keeps its directory open until released.
//
// The walker never follows symlinks below a root and never opens anything that is not known
// to be a directory, except in one case: when lstat fails for a reason other than the path
// having vanished, it opens the path with O_NOFOLLOW|O_NONBLOCK (so that nothing can block)
// and asks fstat. A failed stat is never a skip: the caller decides from what fstat said, or
// records the path as lost when the open failed too.
package walker
