package backupset

import "context"

// Witness is the archive whose name says what a set is: which source it backs up, and
// whether it is encrypted (a Sealed name) or plain.
type Witness struct {
	// Name is the archive's name; "" for a set that holds no run yet, which takes any.
	Name string
	// ByLatest says LATEST names it. Otherwise LATEST is missing or cannot be read, and Name
	// is the set's newest run that left an archive, as Scan orders them.
	ByLatest bool
	// Failed is, when no run of the set left an archive (Name is ""), the newest run's name:
	// a failed run says nothing of the set's source, but its name says the set's kind, which
	// its host was set up to write.
	Failed string
}

// Witness returns the archive that says what the set is: LATEST's target when the pointer
// reads, else the newest run whose archive is there. Every check of "one source per set" and "encrypted or plain,
// not both" (create, activate, adopt) goes by it, so that a lost or damaged LATEST opens the
// set to no other source and no other kind. entries are the set's, as Scan lists them; nil
// to scan only when LATEST cannot say. LATEST is read unless Pointer read it already.
func (l *Lock) Witness(ctx context.Context, entries []Entry) (Witness, error) {
	name, err := l.pointerName, l.pointerErr
	if !l.pointerRead {
		name, _, err = readPointer(ctx, l.store)
	}
	if err == nil {
		return Witness{Name: name, ByLatest: true}, nil
	}
	if entries == nil {
		var err error
		if entries, err = Scan(ctx, l.store); err != nil {
			return Witness{}, err
		}
	}
	// A run that left no archive (a failed run, one of a mistyped source) says nothing of
	// what the set holds; only its kind, when none did.
	failed := ""
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Archive {
			return Witness{Name: entries[i].Name}, nil
		}
		if failed == "" {
			failed = entries[i].Name
		}
	}
	return Witness{Failed: failed}, nil
}
