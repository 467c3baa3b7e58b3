package format

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Whether an archive is the one its receipt describes. A receipt is a text file anyone who
// can write the set can edit; the manifest inside the archive is covered by the archive's
// SHA-256, which the receipt records and a read-back checks. So where both say something,
// the manifest's word is the one proven, and a receipt that disagrees with it is damage.
// Every command that holds an archive against its receipt asks here.

// Summary is an archive's size in bytes and SHA-256 in lowercase hex: what a receipt
// records of it, and what reading it end to end measures.
type Summary struct {
	Size   int64
	SHA256 string
}

// Summary is what rc records of its archive; ok is false when it records none (a failed
// run, a dry run).
func (rc *Receipt) Summary() (sum Summary, ok bool) {
	if rc.Archive == nil {
		return Summary{}, false
	}
	return Summary{Size: rc.Archive.Size, SHA256: rc.Archive.SHA256}, true
}

// Match says why an archive measured as got is not the one its receipt recorded as want,
// or nil. The sizes are compared first: a file of another size is another file.
func (want Summary) Match(got Summary) error {
	if got.Size != want.Size {
		return fmt.Errorf("archive is %d bytes, the receipt says %d", got.Size, want.Size)
	}
	if got.SHA256 != want.SHA256 {
		return errors.New("archive sha256 does not match the receipt")
	}
	return nil
}

// MatchListed says why the file called name beside rc (present says whether there is one,
// of size bytes) is not the archive rc describes, or nil. It is what a listing shows, without
// reading the archive: Match checks its bytes.
func (rc *Receipt) MatchListed(name string, present bool, size int64) error {
	a := rc.Archive
	switch {
	case a == nil && present:
		return errors.New("its receipt says no archive was written")
	case a == nil:
		return nil
	case filepath.Base(a.Path) != name:
		return fmt.Errorf("its receipt describes another archive, %s", QuoteName(filepath.Base(a.Path)))
	case present && a.Size != size:
		return fmt.Errorf("its receipt says %d bytes, the archive has %d", a.Size, size)
	}
	return nil
}

// StatusProven says why rc's status cannot be trusted, or nil: the manifest of the archive
// rc describes (recorded, "" when hasManifest is false) must record the same status. A
// receipt that says failed is a later verdict on a whole archive (its read-back failed) and
// stands whatever the manifest says. who names the receipt in the error ("its receipt").
func (rc *Receipt) StatusProven(who string, hasManifest bool, recorded string) error {
	switch {
	case rc.Status == Failed:
		return nil
	case !hasManifest:
		return errors.New("the archive has no manifest (not made by backup), so its status cannot be proven")
	case recorded != string(rc.Status):
		return fmt.Errorf("%s says %s, but the manifest inside the archive says %s (the receipt was edited?)", who, rc.Status, quoteStatus(recorded))
	}
	return nil
}

// CountsProven says why rc's counts cannot be trusted, or nil: those of files, bytes and
// folders must be those of the archive it describes, as its manifest and entries prove them
// (got); those of skipped, excluded, warned and lost paths, and its lists of them, those of
// its manifest's notes (the receipt of an encrypted archive lists none). A receipt that
// says failed stands, as for StatusProven. who names the receipt.
func (rc *Receipt) CountsProven(who string, got Counts, notes Notes) error {
	if rc.Status == Failed {
		return nil
	}
	for _, c := range []struct {
		what, of  string
		says, has int64
	}{
		{"files", "the archive holds", int64(rc.Counts.Files), int64(got.Files)},
		{"bytes", "the archive holds", rc.Counts.Bytes, got.Bytes},
		{"folders", "the archive holds", int64(rc.Counts.Dirs), int64(got.Dirs)},
		{"skipped paths", manifestRecords, int64(rc.Counts.Skipped), int64(notes.Skipped)},
		{"excluded paths", manifestRecords, int64(rc.Counts.Excluded), int64(notes.Excluded)},
		{"warnings", manifestRecords, int64(rc.Counts.Warnings), int64(notes.Warnings)},
		{"lost paths", manifestRecords, int64(rc.Counts.Lost), int64(notes.Lost)},
	} {
		if c.says != c.has {
			return fmt.Errorf("%s counts %d %s, but %s %d (the receipt was edited?)", who, c.says, c.what, c.of, c.has)
		}
	}
	if rc.Schema == SealedReceiptSchema {
		return nil // it lists no path (see Sealed): its counts say what it says of them
	}
	listed := NotesOf(rc.Skipped, rc.Excluded, rc.Warnings)
	for k, what := range []string{"skipped paths", "excluded paths", "warnings"} {
		if listed.sums[k] != notes.sums[k] {
			return fmt.Errorf("%s lists other %s than the manifest inside the archive (the receipt was edited?)", who, what)
		}
	}
	return nil
}

const manifestRecords = "the manifest inside the archive records"

// quoteStatus renders a status read from an archive, which need not be one of ours.
func quoteStatus(s string) string {
	switch Status(s) {
	case Complete, Incomplete, Failed:
		return s
	}
	return fmt.Sprintf("%q", s)
}
