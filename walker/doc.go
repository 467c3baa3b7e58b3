// Package walker walks source trees in a stable order and hands on one Entry per path it
// meets, with its lstat result or the error that lstat gave.
//
// The walker never follows symlinks below a root and never opens anything that is not known
// to be a directory, except in one case: when lstat fails for a reason other than the path
// having vanished, it opens the path with O_NOFOLLOW|O_NONBLOCK (so that nothing can block)
// and asks fstat. A failed stat is never a skip: the caller decides from what fstat said, or
// records the path as lost when the open failed too.
package walker
