package skiprules

import (
	"io/fs"
)

// Action is what becomes of a path.
type Action string

// The three fates of a path; the values are the receipt's JSON values.
const (
	Archive Action = "archive" // stored in the archive (a regular file, or a directory to descend)
	Skip    Action = "skip"    // not a regular file or directory; Decision.Kind says which
	Exclude Action = "exclude" // the user's rules said no; Decision.Rule says which
)

// Rule names: the receipt's JSON values of "rule" for excluded paths other
// than user patterns, for which rule is the pattern text.
const (
	RuleCacheDir = "CACHEDIR.TAG"    // --exclude-caches and the directory is tagged
	RuleOtherFS  = "one-file-system" // --one-file-system and the directory is on another device
	RuleSelf     = "self"            // the archive, temp file or receipt being written
)

// Decision says what to do with one path. Kind is set for Skip; Rule for
// Exclude.
type Decision struct {
	Action Action
	Kind   Kind
	Rule   string
}

// Rules is the user's choice of exclusions. The zero value archives every
// regular file and directory and skips everything else; StoreSymlinks archives symlinks too.
type Rules struct {
	Exclude       *Matcher      // --exclude / --exclude-from; nil excludes nothing
	ExcludeCaches bool          // --exclude-caches
	OneFileSystem bool          // --one-file-system
	Self          []fs.FileInfo // the archive being written, its temp file, its receipt: never archived (same device and inode)
	StoreSymlinks bool          // --symlinks store: a symlink is archived (as a link, never followed) rather than skipped
}

// Decide classifies one path. dir opens files inside the path when it is a
// directory (for the CACHEDIR.TAG lookup; nil looks into nothing), rel its
// slash-separated name below its source root
// ("" for the root itself: a root is never excluded by patterns, caches or
// one-file-system, but is still skipped by kind), info its lstat result
// (never nil), rootDev the device id of the source root (DeviceOf of the
// root's lstat result).
//
// The order is: self; user patterns (the user named the path, so that beats
// being skipped by kind); kind; then, for directories only, another device and
// CACHEDIR.TAG. A directory on another device than rootDev is excluded
// with RuleOtherFS and not descended, like borg, so the receipt shows the
// mount point that was left out; it is decided before the tag, whose lookup
// would open the mount point and read a file on the other file system. Only
// the CACHEDIR.TAG rule does I/O.
func (r Rules) Decide(dir Dir, rel string, info fs.FileInfo, rootDev uint64) Decision {
	if r.isSelf(info) {
		return Decision{Action: Exclude, Rule: RuleSelf}
	}
	if rel != "" {
		if pat, excluded := r.Exclude.Match(rel, info.IsDir()); excluded {
			return Decision{Action: Exclude, Rule: pat}
		}
	}
	if k := KindOf(info.Mode()); k != "" && (k != KindSymlink || !r.StoreSymlinks) {
		return Decision{Action: Skip, Kind: k}
	}
	if rel == "" || !info.IsDir() {
		return Decision{Action: Archive}
	}
	if r.OneFileSystem && DeviceOf(info) != rootDev {
		return Decision{Action: Exclude, Rule: RuleOtherFS}
	}
	if r.ExcludeCaches && IsCacheDir(dir) {
		return Decision{Action: Exclude, Rule: RuleCacheDir}
	}
	return Decision{Action: Archive}
}

// isSelf reports whether info is one of the files the backup itself writes,
// which must never be archived into themselves.
func (r Rules) isSelf(info fs.FileInfo) bool {
	for _, s := range r.Self {
		if s != nil && sameFile(s, info) {
			return true
		}
	}
	return false
}

// DeviceOf returns the device id in info, or 0 when it has none (info did
// not come from a unix lstat, as with fstest.MapFS).
func DeviceOf(info fs.FileInfo) uint64 {
	return deviceOf(info)
}
