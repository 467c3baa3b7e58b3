package main

// What a receipt may be trusted with: the rules are format's (format/match.go); what the
// archive's entries prove is here.

import (
	"fmt"
	"strings"

	"backup/archive"
)

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
