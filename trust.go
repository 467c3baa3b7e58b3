package main

// What a receipt may be trusted with: the rules are format's (format/match.go); what the
// archive's entries prove is here.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"backup/archive"
	"backup/backupset"
	"backup/format"
	"backup/seal"
)

// entriesUnder says why the archive's entries are not a backup of the source called name, or
// nil: create stores every entry under its source's name, so the entries prove which source
// an archive holds whatever its receipt or its file name says. who says what claims name
// ("its receipt names").
//
// A run of several SOURCEs, which earlier versions made into a set, holds the one its name
// says first: it is told apart, as such a run is still read by its path.
func entriesUnder(entries []*archive.Entry, name, who string) error {
	named := false
	for _, e := range entries {
		if e.Name == name || strings.HasPrefix(e.Name, name+"/") {
			named = true
			continue
		}
		top, _, _ := strings.Cut(e.Name, "/")
		if named {
			return fmt.Errorf("the archive holds %s beside %s, the source %s: a set holds one (read a run of several SOURCEs by its path)", format.Quote(top), format.Quote(name), who)
		}
		return fmt.Errorf("the archive's entries are under %s, %s %s", format.Quote(top), who, format.Quote(name))
	}
	return nil
}

// entriesOfSet says why entries, those of the archive called name in the set st, are not a
// backup of the set's source, or nil. A plain archive's name says its source. An encrypted
// archive's names none: its entries must be under one name, and, when LATEST (latest) names
// another encrypted archive that ids decrypt, under the name that one's are.
func entriesOfSet(ctx context.Context, st backupset.Store, ids *seal.Identities, name, latest string, entries []*archive.Entry) error {
	if !backupset.IsSealedName(name) {
		return entriesUnder(entries, backupset.SourceOf(name), "its name says")
	}
	top, err := soleSource(entries)
	if err != nil || latest == name {
		return err
	}
	return sealedOfSet(ctx, st, ids, top, latest)
}

// targetOfSet says why entries, those of the set's LATEST target called name, are not a
// backup of the set's source, or nil: as entriesOfSet, with nothing newer to compare an
// encrypted archive's source with.
func targetOfSet(name string, entries []*archive.Entry) error {
	if backupset.IsSealedName(name) {
		_, err := soleSource(entries)
		return err
	}
	return entriesUnder(entries, backupset.SourceOf(name), "its name says")
}

// sealedOfSet says why an encrypted archive holding the source top is not of the set whose
// LATEST names latest: when that is an encrypted archive ids decrypt, its source must be top.
// Without a key nothing can be told: the set's archives name no source.
func sealedOfSet(ctx context.Context, st backupset.Store, ids *seal.Identities, top, latest string) error {
	if !backupset.IsSealedName(latest) {
		return nil
	}
	want, ok, err := sealedSource(ctx, st, latest, ids)
	if err != nil {
		return err
	}
	if ok && want != top {
		return fmt.Errorf("the archive's entries are under %s, and the set's LATEST %s holds %s", format.Quote(top), format.QuoteName(latest), format.Quote(want))
	}
	return nil
}

// soleSource is the one name every entry is stored under: the source of an archive whose
// name and receipt do not say it (an encrypted one).
func soleSource(entries []*archive.Entry) (string, error) {
	top := ""
	for _, e := range entries {
		t, _, _ := strings.Cut(e.Name, "/")
		if top == "" {
			top = t
		} else if t != top {
			return "", fmt.Errorf("the archive holds entries under %q and %q: a set holds one source", top, t)
		}
	}
	if top == "" {
		return "", errors.New("the archive holds no entry")
	}
	return top, nil
}
