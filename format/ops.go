package format

// The ops of a Warning: what was being done to the path when the problem met it. They are
// the receipt's and the manifest's "op" values; the walker names OpStat, OpOpen, OpReadDir
// and OpXattr in its own errors, which must be spelled as here (a test of package archive
// holds them to it).
const (
	// OpStat: a path could not be stat'ed; nothing is lost by it alone.
	OpStat = "stat"
	// OpOpen: the file could not be opened; it is not in the archive.
	OpOpen = "open"
	// OpRead: reading the file failed; it is not in the archive.
	OpRead = "read"
	// OpReadDir: a folder could not be listed; what it holds is not in the archive.
	OpReadDir = "readdir"
	// OpXattr: the extended attributes could not be read.
	OpXattr = "xattr"
	// OpStore: no zip entry can hold the path's name; it is not in the archive.
	OpStore = "store"
	// OpReuse: an entry of the reference whose bytes did not check out; the file was read
	// from the source instead, so nothing is lost.
	OpReuse = "reuse"
	// OpVanished: the path was gone by the time it was read.
	OpVanished = "vanished"
	// OpChanged: the file kept changing while it was read; the last copy read is stored.
	OpChanged = "changed"
	// OpSnapshot: a database could not be copied consistently; it is not in the archive.
	OpSnapshot = "snapshot"
	// OpError: a problem that names no op of its own.
	OpError = "error"
)

// FailOnOps are the warning ops that lose no data, which --fail-on may count as lost.
var FailOnOps = []string{OpVanished, OpChanged, OpStat}
