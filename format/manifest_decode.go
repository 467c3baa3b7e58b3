package format

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// manifestWire is the manifest as its JSON holds it: the lists as their JSON records, so
// that unknown fields in them are refused, turned into values after.
type manifestWire = struct {
	Manifest
	Files    []fileJSON     `json:"files"`
	Dirs     []dirJSON      `json:"dirs"`
	Symlinks []symlinkJSON  `json:"symlinks"`
	Skipped  []skippedJSON  `json:"skipped"`
	Excluded []excludedJSON `json:"excluded"`
	Warnings []warningJSON  `json:"warnings"`
	Created  []createdJSON  `json:"created"`
	Replaced []createdJSON  `json:"replaced"`
	// dropped is the first error in the skipped, excluded and warning records that were
	// checked and let go (see decodeNotes), by list; summed sums them up, and let says
	// whether any list was let go.
	dropped [3]error
	summed  noteSummer
	let     bool
}

// manifestDecoder decodes a manifest from a stream into a manifestWire exactly as a
// json.Decoder with DisallowUnknownFields would (the same values, the same errors), but
// holds one value of the top-level object at a time, and one record of a list: a
// million-file manifest is hundreds of MB. The records of the big lists go through a fast
// parser (manifest_records.go); whatever it does not take, and every other value, is
// decoded by encoding/json itself.
//
// encoding/json checks the syntax of the whole document before it decodes any of it, and
// goes on decoding after a type error or an unknown field (saved, the first one returned at
// the end) but not after another error (stop); so after an error the decoder goes on
// reading, to report a syntax error further on instead.
type manifestDecoder struct {
	src      io.Reader
	buf      []byte
	pos, end int
	rerr     error  // the read error after buf[:end]: io.EOF at the end
	raw      []byte // the value being decoded
	start    int    // where in raw the value being read starts
	lex      lexer  // the fast parser's
	saved    error
	stop     error
	scan     *fileScan // set by ScanManifest: files are handed to it, not listed
	// entries is how many entries the archive has besides the manifest (NoEntryLimit:
	// any), and named how many records of files, folders and symlinks have been read.
	entries, named int
	notes          bool // the notes are held (see Within)
	// createdCut says a record of what was created failed its check: those after it are
	// let go (see decodeCreated); replacedCut the same of what was replaced.
	createdCut, replacedCut bool
}

func newManifestDecoder(r io.Reader, in Within) *manifestDecoder {
	return &manifestDecoder{src: r, buf: make([]byte, 64<<10), entries: in.Entries, notes: in.Notes}
}

// nameEntry counts a record of the list name, which names an entry of the archive if it is
// a file, folder or symlink. Up to twice as many as the archive has entries, and
// missingEntries more, are read: verify then names each entry that is missing (lost to
// `zip -d`, say). Past that the manifest is refused, as soon as it is read.
func (d *manifestDecoder) nameEntry(name string) error {
	if d.entries == NoEntryLimit || name != "files" && name != "dirs" && name != "symlinks" {
		return nil
	}
	if d.named++; d.named > 2*d.entries+missingEntries {
		return fmt.Errorf("%d files, folders and symlinks or more, for an archive of %d entries", d.named, d.entries)
	}
	return nil
}

// missingEntries is how many more records of files, folders and symlinks than twice its
// entries a manifest may have and be read: some 25 MB of them.
const missingEntries = 1 << 16

// decode reads the top-level value into w.
func (d *manifestDecoder) decode(w *manifestWire) error {
	c, ok := d.nonSpace()
	if !ok {
		return d.rerr // io.EOF for an empty stream, as json.Decoder says
	}
	if c != '{' {
		if err := d.value(c); err != nil {
			return err
		}
		if err := d.note(decodeJSON(d.raw, w), ""); err != nil {
			return err
		}
		return d.result()
	}
	d.pos++
	if c, ok = d.nonSpace(); ok && c == '}' {
		d.pos++
		return d.result()
	}
	for ok {
		if err := d.field(w, c); err != nil {
			return err
		}
		if c, ok = d.nonSpace(); !ok {
			break
		}
		d.pos++
		switch c {
		case '}':
			return d.result()
		case ',':
			c, ok = d.nonSpace()
			continue
		}
		return syntaxError(`{"":""`, c)
	}
	return d.eofError()
}

// field decodes one key and value of the top-level object, starting at c.
func (d *manifestDecoder) field(w *manifestWire, c byte) error {
	if c != '"' {
		return syntaxError(`{"":"",`, c)
	}
	d.raw, d.start = d.raw[:0], 0
	if err := d.str(); err != nil {
		return err
	}
	if err := validate(d.raw); err != nil {
		return err
	}
	key := string(d.raw)
	if c, ok := d.nonSpace(); !ok {
		return d.eofError()
	} else if c != ':' {
		return syntaxError(`{""`, c)
	}
	d.pos++
	c, ok := d.nonSpace()
	if !ok {
		return d.eofError()
	}
	list := listName(key)
	if d.scan != nil && list == "files" && (c != '[' || key != `"files"`) {
		d.scan.notAsWritten = true // files that encoding/json would decode as written
		return ErrNotAsWritten
	}
	if c == '[' {
		// A list's key in another case ("Files") is the same field to encoding/json: it is
		// decoded here too, record by record, within the same bounds.
		switch list {
		case "files":
			if d.scan != nil {
				return d.scanFiles()
			}
			return decodeList(d, &w.Files, "files", parseFileRecord)
		case "dirs":
			return decodeList(d, &w.Dirs, "dirs", parseDirRecord)
		case "symlinks":
			return decodeList(d, &w.Symlinks, "symlinks", parseSymlinkRecord)
		case "skipped":
			return decodeNotes(d, w, &w.Skipped, 0, parseSkippedRecord, skippedJSON.value)
		case "excluded":
			return decodeNotes(d, w, &w.Excluded, 1, parseExcludedRecord, excludedJSON.value)
		case "warnings":
			return decodeNotes(d, w, &w.Warnings, 2, parseWarningRecord, warningJSON.value)
		case "created":
			return decodeCreated(d, &w.Created, "created", &d.createdCut, createdJSON.value)
		case "replaced":
			return decodeCreated(d, &w.Replaced, "replaced", &d.replacedCut, replacedValue)
		}
	}
	if k := slices.Index(noteLists, list); k >= 0 && c == 'n' {
		w.dropped[k] = nil // null replaces the list, and what was wrong in it
		w.summed.reset(k)
	}
	if list == "created" && c == 'n' {
		d.createdCut = false
	}
	if list == "replaced" && c == 'n' {
		d.replacedCut = false
	}
	// Anything else is decoded as the one field of an object, into the whole: so
	// encoding/json matches the key (case-insensitively) and words the errors.
	d.raw = append(d.raw[:0], key...)
	d.raw = append(d.raw, ':')
	if err := d.value(c); err != nil {
		return err
	}
	if d.stop != nil {
		return validate(d.raw[len(key)+1:])
	}
	d.raw = append(d.raw, '}')
	return d.note(decodeJSON(append([]byte{'{'}, d.raw...), w), "")
}

// listNames are the manifest's lists of records, as their fields are named; noteLists
// those of them that only a listing shows, in the order of manifestWire.dropped.
var (
	listNames = []string{"files", "dirs", "symlinks", "skipped", "excluded", "warnings", "created", "replaced"}
	noteLists = []string{"skipped", "excluded", "warnings"}
)

// listName is the list that key, as JSON, names to encoding/json (which matches keys without
// regard to case, as strings.EqualFold does); "" for none.
func listName(key string) string {
	var name string
	if json.Unmarshal([]byte(key), &name) != nil {
		return ""
	}
	for _, list := range listNames {
		if strings.EqualFold(name, list) {
			return list
		}
	}
	return ""
}

// decodeNotes is decodeList for the list of notes noteLists[k] (what was skipped, excluded
// or warned about), which only a listing shows. Unless the reader keeps them (d.notes), each
// record is decoded into the same one, checked as fromWire would check it, summed up in
// w.summed (a receipt's copy of them is held to that), and let go, the first error kept in
// w.dropped[k] for fromWire: millions of tiny records ("skipped": [{}, {}, …], JSON that
// deflates a thousandfold) would otherwise be held, gigabytes, by a verify.
func decodeNotes[J, V any](d *manifestDecoder, w *manifestWire, list *[]J, k int, fast func(*J, *lexer) bool, value func(J) (V, error)) error {
	name, dropped := noteLists[k], &w.dropped[k]
	if d.notes {
		return decodeList(d, list, name, fast)
	}
	w.let = true
	if *list != nil {
		// encoding/json would decode it over the first, merging records (which may mend
		// the one whose error was kept): not as backup writes it, and not worth holding the
		// first for.
		*dropped = fmt.Errorf("%s given twice", name)
	}
	*list = make([]J, 0)
	one := make([]J, 1)
	_, err := d.eachElement(func(_ int, c byte) error {
		if err := decodeInto(d, &one, c, name, fast); err != nil {
			return err
		}
		if d.stop == nil && len(one) == 1 {
			v, err := value(one[0])
			if *dropped == nil {
				*dropped = err
			}
			w.summed.add(v)
		}
		return nil
	})
	return err
}

// decodeInto decodes the element of the list name that starts with c into the one record
// *one holds (its capacity), as into a new element: the record of a list that is not held.
func decodeInto[J any](d *manifestDecoder, one *[]J, c byte, name string, fast func(*J, *lexer) bool) error {
	clear((*one)[:1])
	*one = (*one)[:0]
	return decodeElement(d, one, 0, c, name, fast)
}

// eachElement walks a JSON array (the next byte is its '['): elem decodes each element,
// given its index and first byte. It returns how many there were.
func (d *manifestDecoder) eachElement(elem func(i int, c byte) error) (int, error) {
	d.pos++
	c, ok := d.nonSpace()
	i := 0
	for ok && (c != ']' || i > 0) { // after a comma, a ']' is an error
		if err := elem(i, c); err != nil {
			return i, err
		}
		i++
		if c, ok = d.nonSpace(); !ok || c == ']' {
			break
		}
		if c != ',' {
			return i, syntaxError(`[""`, c)
		}
		d.pos++
		c, ok = d.nonSpace()
	}
	if !ok {
		return i, d.eofError()
	}
	d.pos++
	return i, nil
}

// decodeCreated is decodeList for what a before-state lists as created, which restore
// needs and which the archive's entries do not bound (a restore into an empty folder
// creates every path it writes). Each record is checked as fromWire checks it as soon as it
// is read, and those after the first that fails are decoded into one record and let go:
// fromWire finds that error where it is, and millions of `{}` are refused in little memory
// instead of held. A list given again after that is refused, as the notes' are:
// encoding/json would decode it over the records let go. The list of what a before-state's
// restore wrote over ("replaced", records of the same shape) is read the same way: name,
// its cut flag and its check.
func decodeCreated(d *manifestDecoder, list *[]createdJSON, name string, cut *bool, value func(createdJSON) (Created, error)) error {
	if *cut && d.stop == nil {
		d.stop = errors.New(name + " given twice")
	}
	one := make([]createdJSON, 1)
	i, err := d.eachElement(func(i int, c byte) error {
		if *cut {
			return decodeInto(d, &one, c, name, parseCreatedRecord)
		}
		if err := decodeElement(d, list, i, c, name, parseCreatedRecord); err != nil {
			return err
		}
		if d.stop == nil {
			_, err := value((*list)[i])
			*cut = err != nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	endList(d, list, i)
	return nil
}

// decodeList decodes a JSON array (the next byte is its '[') into *list as encoding/json
// decodes one into a slice, fast taking each element it can.
func decodeList[J any](d *manifestDecoder, list *[]J, name string, fast func(*J, *lexer) bool) error {
	i, err := d.eachElement(func(i int, c byte) error { return decodeElement(d, list, i, c, name, fast) })
	if err != nil {
		return err
	}
	endList(d, list, i)
	return nil
}

// endList leaves *list as encoding/json does after an array of i elements.
func endList[J any](d *manifestDecoder, list *[]J, i int) {
	if d.stop == nil {
		*list = (*list)[:min(i, len(*list))]
		if i == 0 {
			*list = make([]J, 0)
		}
	}
}

// nextElement returns the i'th element of *list as encoding/json decodes into it: growing
// the slice by one, or decoding into what the slice already holds (a key given twice).
func nextElement[J any](list *[]J, i int) *J {
	s := *list
	if i >= cap(s) {
		var zero J
		s = append(s, zero)
	} else if i >= len(s) {
		s = s[:i+1]
	}
	*list = s
	return &s[i]
}

// decodeElement decodes the i'th element of the list, which starts with c. Most records
// are taken by the fast parser straight from the read buffer, without a copy; the rest are
// copied whole into raw first.
func decodeElement[J any](d *manifestDecoder, list *[]J, i int, c byte, name string, fast func(*J, *lexer) bool) error {
	if err := d.nameEntry(name); err != nil {
		return err
	}
	var rec *J
	if d.stop == nil {
		rec = nextElement(list, i)
		// A record cut off by the buffer's end fails here, having set only fields that
		// decoding it whole sets again.
		if d.lex.b, d.lex.i = d.buf[d.pos:d.end], 0; fast != nil && c == '{' && fast(rec, &d.lex) {
			d.pos += d.lex.i
			return nil
		}
	}
	d.raw = d.raw[:0]
	if err := d.value(c); err != nil {
		return err
	}
	if d.stop != nil {
		return validate(d.raw)
	}
	if d.lex.b, d.lex.i = d.raw, 0; fast != nil && fast(rec, &d.lex) {
		return nil
	}
	return d.note(decodeJSON(d.raw, rec), name)
}

// decodeJSON decodes data into v as the manifest's decoder does.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// note keeps err from decoding a value of the list name ("" at the top) as encoding/json
// would have: a syntax error is returned, to end the decoding.
func (d *manifestDecoder) note(err error, name string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var b64 base64.CorruptInputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		return err
	case errors.As(err, &typ):
		// encoding/json names the field from the top of the document.
		if name != "" {
			typ.Field = strings.TrimSuffix(name+"."+typ.Field, ".")
		}
	case !errors.As(err, &b64) && !strings.HasPrefix(err.Error(), "json: unknown field "):
		d.stop = err
		return nil
	}
	if d.saved == nil {
		d.saved = err
	}
	return nil
}

func (d *manifestDecoder) result() error {
	if d.stop != nil {
		return d.stop
	}
	return d.saved
}

// trailing checks what follows the manifest, as json.Decoder.Token would read it.
func (d *manifestDecoder) trailing() error {
	c, ok := d.nonSpace()
	if !ok {
		if d.rerr == io.EOF {
			return nil
		}
		return d.rerr
	}
	switch c {
	case '{', '[':
		return errors.New("data after the manifest")
	case '}', ']', ':', ',':
		return syntaxError("", c)
	}
	d.raw = d.raw[:0]
	if err := d.value(c); err != nil {
		return err
	}
	if err := validate(d.raw); err != nil {
		return err
	}
	return errors.New("data after the manifest")
}

// syntaxError is the error encoding/json gives for the byte c after the JSON prefix.
func syntaxError(prefix string, c byte) error {
	err := json.Unmarshal(append([]byte(prefix), c), new(any))
	if err == nil {
		panic("archive: no syntax error in " + prefix + string(c))
	}
	return err
}

// validate returns the syntax error in a value that was only read.
func validate(raw []byte) error {
	if json.Valid(raw) {
		return nil
	}
	return json.Unmarshal(raw, new(any))
}
