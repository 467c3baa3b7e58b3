package format

import "backup/atomicfile"

// A restore records each temp name it makes in a journal in DEST's top folder, so that the
// next restore into DEST removes what a killed one left (package restore keeps it). The
// journal's name is JournalPrefix, a token of 1 to 13 base-36 digits (64 random bits), and
// JournalSuffix. An archive entry of such a name at the top of an archive would be taken for
// a dead run's journal by the next restore, and the files it lists removed: readers refuse
// it as an unsafe name.
const (
	JournalPrefix = ".backup-restore-"
	JournalSuffix = ".journal"
)

// JournalToken returns the token of a journal's name, and whether name is one.
func JournalToken(name string) (string, bool) {
	return atomicfile.JournalKind{Prefix: JournalPrefix, Suffix: JournalSuffix}.Token(name)
}
