package format

import "time"

// Meta is what a v2 manifest records of an entry besides its name and data: its owner and,
// when asked for, its extended attributes. It is a struct of its own so that later fields
// (change time, inode, device for reusing unchanged entries) join the same record.
type Meta struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// Mode is the Unix mode (type and permission bits, as st_mode) that the entry's central
	// record holds, which nothing else covers: no local header repeats it. 0 where it was
	// not recorded (backup before it), since a mode always has its type bits.
	Mode uint32 `json:"mode,omitempty"`
	// MtimeNsec is the fraction of a second of the mtime, in nanoseconds, which the zip's
	// extended timestamp (whole seconds) cannot hold.
	MtimeNsec int `json:"mtime_nsec,omitempty"`
	// MtimeSec is the mtime's whole seconds (Unix), recorded only when the extended
	// timestamp, a signed 32-bit count, cannot hold them: before 1901-12-13 or after
	// 2038-01-19T03:14:07Z.
	MtimeSec int64 `json:"mtime_sec,omitempty"`
	// CtimeNsec, Ino and Dev are a file's change time (Unix nanoseconds), inode and device:
	// with the size, mtime and mode they tell a later run that the file is unchanged and its
	// entry can be copied from this archive. Device is recorded, not compared: its number
	// may change at a reboot.
	CtimeNsec int64  `json:"ctime_ns,omitempty"`
	Ino       uint64 `json:"ino,omitempty"`
	Dev       uint64 `json:"dev,omitempty"`
	User      string `json:"user,omitempty"`  // the owner's name on the machine that made the backup
	Group     string `json:"group,omitempty"` // the group's name there
	// Xattrs are the extended attributes (ACLs and capabilities included) by name; JSON
	// carries each value in standard base64. Empty ({}) when they were read and there are
	// none; nil when they were not read (no --xattrs, or they could not be), which restore
	// must not take for none.
	Xattrs map[string][]byte `json:"xattrs,omitzero"`
}

// Method is how file contents are compressed; its values are the --method values and the
// manifest's.
type Method string

// The methods backup writes. The zero Method is Deflate.
const (
	// Deflate is zip method 8, which every unzip reads.
	Deflate Method = "deflate"
	// Zstd is zip method 93 (WinZip's number for Zstandard), read by 7-Zip and libarchive
	// (bsdtar) but not by Info-ZIP unzip 6.0. Each file being compressed on its own, it gains
	// little over deflate (BENCHMARKS.md).
	Zstd Method = "zstd"
)

// Compression is the setting a manifest records its entries were compressed with: an
// entry is copied from a reference only when it was made with the run's own setting, so
// that the archive holds the same bytes as if every file had been read again.
type Compression struct {
	Method Method `json:"method"`
	Level  int    `json:"level"`
}

// CopySource describes the file an entry stored as a consistent copy made from it (a
// database snapshot) was made from.
type CopySource struct {
	Kind    string    `json:"kind"` // what made the copy: "sqlite"
	Size    int64     `json:"source_size"`
	ModTime time.Time `json:"source_mtime"`
}
