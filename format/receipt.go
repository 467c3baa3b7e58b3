package format

import (
	"encoding/json"
	"slices"
	"time"
)

// ReceiptSchema names the version of the receipt's format. A change that breaks a field's
// meaning needs a new version.
const ReceiptSchema = "backup.receipt/v1"

// SealedReceiptSchema names the receipt of an encrypted archive (see Receipt.Sealed): v1's
// fields that name no path, and encryption. It is a version of its own because fields change
// meaning: sources and the lists are absent rather than empty, and archive.path is the
// archive's file name only. A plain run still writes v1.
const SealedReceiptSchema = "backup.receipt/v2"

// Status is the outcome of a run; the values are the receipt's JSON values.
type Status string

// The statuses of a run.
const (
	Complete   Status = "complete"
	Incomplete Status = "incomplete"
	Failed     Status = "failed"
)

// ReceiptSuffix follows an archive's name to name its receipt.
const ReceiptSuffix = ".receipt.json"

// ReceiptPath is where the receipt of the archive at path goes, unless told otherwise.
func ReceiptPath(archive string) string { return archive + ReceiptSuffix }

// Receipt is the record of one run that a cron wrapper reads.
type Receipt struct {
	Schema      string    `json:"schema"`
	Status      Status    `json:"status"`
	ToolVersion string    `json:"tool_version"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	DryRun      bool      `json:"dry_run,omitempty"`
	Sources     []string  `json:"sources"`
	// SourcesB64 is set only when a source's path is not UTF-8: each source's bytes in
	// base64, in the order of Sources, "" for one that is UTF-8. Marshal sets it.
	SourcesB64 []string     `json:"sources_b64,omitempty"`
	Archive    *ArchiveInfo `json:"archive"`
	Counts     Counts       `json:"counts"`
	Skipped    []Skipped    `json:"skipped"`
	Excluded   []Excluded   `json:"excluded"`
	Warnings   []Warning    `json:"warnings"`
	Error      string       `json:"error,omitempty"`
	Hooks      []Hook       `json:"hooks,omitempty"`
	// WouldSnapshot lists, in a dry run, the files that would be stored as snapshots,
	// sorted by path; absent otherwise, and when there are none. Added within v1.
	WouldSnapshot []WouldCopy `json:"would_snapshot,omitempty"`
	// Encryption describes an encrypted archive; absent for a plain one. Stored receipts
	// that have it are v2 (Sealed); a run's --json keeps v1 and adds it.
	Encryption *Encryption `json:"encryption,omitempty"`
}

// Encryption is how an archive is encrypted: what its receipt says without naming a path.
type Encryption struct {
	// Format is "age": the archive is one age file holding the whole zip.
	Format string `json:"format"`
	// Recipients are the public keys it is encrypted to, or their fingerprints (seal's
	// Recipients.Names): what a monitor compares between runs. Never a source of keys.
	Recipients []string `json:"recipients"`
	// ReadBack says how the archive was read back before it was trusted: ReadBackContents
	// or ReadBackCiphertext; absent when it was not read back (-o without --verify, -o -).
	ReadBack string `json:"read_back,omitempty"`
}

// What the read-back of an encrypted archive checked.
const (
	// ReadBackContents: decrypted with an identity and checked as backup verify checks.
	ReadBackContents = "contents"
	// ReadBackCiphertext: without an identity, its size, SHA-256 and age header only.
	ReadBackCiphertext = "ciphertext"
)

// AgeFormat is Encryption.Format of an age file.
const AgeFormat = "age"

// Hook is what became of one --exec-before or --exec-after command. Its exit code never
// changes the run's status, except that a failed before hook stops the run.
type Hook struct {
	When     string `json:"when"` // "before" or "after"
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"` // -1 when it could not start, timed out or was interrupted
	Error    string `json:"error,omitempty"`
}

// ArchiveInfo locates the archive a receipt describes.
type ArchiveInfo struct {
	Path string `json:"path"`
	// PathB64 is Path's bytes in base64 when it is not UTF-8; Marshal sets it.
	PathB64 string `json:"path_b64,omitempty"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
}

// Counts sums up a run.
type Counts struct {
	Files      int   `json:"files"`
	Dirs       int   `json:"dirs"`
	Symlinks   int   `json:"symlinks"`    // stored symlinks (--symlinks store)
	LinkGroups int   `json:"link_groups"` // groups of files that are hard links of each other
	Bytes      int64 `json:"bytes"`
	// Reused and ReusedBytes count the files (and their bytes) whose entries were copied
	// from the reference because they were unchanged; in a dry run, those that would be.
	Reused      int   `json:"reused"`
	ReusedBytes int64 `json:"reused_bytes"`
	Skipped     int   `json:"skipped"`
	Excluded    int   `json:"excluded"`
	Warnings    int   `json:"warnings"`
	Lost        int   `json:"lost"`
	// Snapshots counts the files stored as consistent snapshots (SQLite databases); absent
	// when there are none.
	Snapshots int `json:"snapshots,omitempty"`
}

// Marshal encodes the receipt as indented JSON with a final newline: a v2 receipt with only
// the fields it has (see Sealed).
func (rc *Receipt) Marshal() ([]byte, error) {
	rc = rc.withTwins()
	var v any = rc
	if rc.Schema == SealedReceiptSchema {
		v = sealedView(rc)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// withTwins is rc with the _b64 twins of its sources and archive path, as every JSON record
// of backup gives a name that is not UTF-8 (a JSON string holds UTF-8 only). rc is not
// changed.
func (rc *Receipt) withTwins() *Receipt {
	c := *rc
	c.Sources, c.SourcesB64 = twins(rc.Sources, rc.SourcesB64)
	if rc.Archive != nil {
		a := *rc.Archive
		a.Path, a.PathB64 = twin(a.Path, a.PathB64)
		c.Archive = &a
	}
	return &c
}

// twin is name as JSON text and its _b64 twin: made from name's bytes when they are not
// UTF-8. A receipt read back holds the text, so the twin read with it (b64) is kept while it
// still shows as name; whoever changes a name read clears its twin (adopt names its copy),
// since a new name can show as the old one did (a folder named with a real U+FFFD).
func twin(name, b64 string) (string, string) {
	if text, made := JSONText(name); made != "" {
		return text, made
	}
	if _, err := (jsonPath{Path: name, PathB64: b64}).decode(); err != nil {
		return name, ""
	}
	return name, b64
}

// twins is twin for each of names, b64s read with them; the twins are nil when no name has
// one, else one per name, "" for a name that is UTF-8.
func twins(names, b64s []string) ([]string, []string) {
	texts, out := names, []string(nil)
	for i, name := range names {
		read := ""
		if i < len(b64s) {
			read = b64s[i]
		}
		text, b64 := twin(name, read)
		if b64 == "" {
			continue
		}
		if out == nil {
			texts, out = slices.Clone(names), make([]string, len(names))
		}
		texts[i], out[i] = text, b64
	}
	return texts, out
}
