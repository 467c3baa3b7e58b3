package atomicfile

// The names of temp files. Every temp file backup makes beside a final path, or in the
// folder an archive is written to, is named by these rules: a set's cleaner removes what
// a killed run left behind by them, and nothing else.
const (
	// TempInfix follows a dot and the final file's name in its temp file's name, before a
	// random suffix: ".NAME.tmp-RANDOM".
	TempInfix = ".tmp-"
	// SpoolPrefix begins the name of a spool: bytes staged for an archive (compressed data
	// waiting for its turn, a database snapshot being taken).
	SpoolPrefix = ".backup-spool-"
)

// TempPattern is the os.CreateTemp pattern of a temp file for the final name base:
// ".base.tmp-*".
func TempPattern(base string) string { return "." + base + TempInfix + "*" }
