package main

// What a receipt may be trusted with. A receipt is a text file anyone who can write the set
// can edit; the manifest inside the archive is covered by the archive's SHA-256, which the
// receipt records and a read-back checks. So where both say something, the manifest's word
// is the one proven, and a receipt that disagrees with it is damage.

import (
	"errors"
	"fmt"
	"strings"

	"backup/archive"
	"backup/report"
)

// statusProven says why the receipt's status cannot be trusted, or nil: the manifest of the
// archive the receipt describes (recorded, "" when hasManifest is false) must record the
// same status. A receipt that says failed is a later verdict on a whole archive (its
// read-back failed) and stands whatever the manifest says. who names the receipt in the
// error ("its receipt").
func statusProven(rc *report.Receipt, who string, hasManifest bool, recorded string) error {
	switch {
	case rc.Status == report.Failed:
		return nil
	case !hasManifest:
		return errors.New("the archive has no manifest (not made by backup), so its status cannot be proven")
	case recorded != string(rc.Status):
		return fmt.Errorf("%s says %s, but the manifest inside the archive says %s (the receipt was edited?)", who, rc.Status, quoteStatus(recorded))
	}
	return nil
}

// quoteStatus renders a status read from an archive, which need not be one of ours.
func quoteStatus(s string) string {
	switch report.Status(s) {
	case report.Complete, report.Incomplete, report.Failed:
		return s
	}
	return fmt.Sprintf("%q", s)
}

// entriesUnder says why the archive's entries are not a backup of the source called name, or
// nil: create stores every entry under its source's name, so the entries prove which source
// an archive holds whatever its receipt or its file name says. who says what claims name
// ("its receipt names").
func entriesUnder(entries []*archive.Entry, name, who string) error {
	for _, e := range entries {
		if e.Name != name && !strings.HasPrefix(e.Name, name+"/") {
			top, _, _ := strings.Cut(e.Name, "/")
			return fmt.Errorf("the archive's entries are under %q, %s %q", top, who, name)
		}
	}
	return nil
}
