// Package skiprules decides what becomes of each path a walk meets: it is
// archived, skipped (not a regular file or directory, on purpose) or
// excluded (by the user's patterns, a CACHEDIR.TAG, --one-file-system, or
// because it is the archive being written).
//
// The package owns the classification and nothing else. It promises:
//
//   - Every path gets exactly one Decision, and a Decision that is not
//     Archive always names why (a Kind for Skip, a Rule for Exclude), so the
//     receipt can list it; nothing is dropped without a reason.
//   - Classification uses only the lstat result the caller already has. The
//     only I/O is reading a CACHEDIR.TAG, through the caller's Dir (the
//     walker's Entry), which opens it relative to the directory's own
//     descriptor, only when it is a regular file, without following links.
//   - Exclude patterns follow gitignore syntax and semantics, and matching
//     takes time polynomial in the sizes of pattern and path, whatever the
//     pattern.
//
// It is a leaf: it imports only the standard library, and its functions are
// safe for concurrent use.
package skiprules
