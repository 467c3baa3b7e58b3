package skiprules

import "io/fs"

// Kind names why a path was skipped; the values are the receipt's JSON values.
type Kind string

// The kinds of paths that are skipped rather than archived. Opening any of
// them could block (FIFO), read forever (device), fail (socket) or leave the
// tree (symlink), so they are classified from the lstat mode alone.
const (
	KindSymlink Kind = "symlink"
	KindSocket  Kind = "socket"
	KindFIFO    Kind = "fifo"
	KindDevice  Kind = "device" // char or block device
	KindOther   Kind = "other"
)

// KindOf returns "" for a regular file or a directory, else the kind it is
// skipped as. Modes no other kind covers (fs.ModeIrregular, unknown type
// bits) are KindOther, so an unexpected file type is skipped and listed, never
// opened.
func KindOf(mode fs.FileMode) Kind {
	switch {
	case mode.IsRegular(), mode.IsDir():
		return ""
	case mode&fs.ModeSymlink != 0:
		return KindSymlink
	case mode&fs.ModeSocket != 0:
		return KindSocket
	case mode&fs.ModeNamedPipe != 0:
		return KindFIFO
	case mode&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		// Go sets ModeCharDevice together with ModeDevice; either one
		// alone still means a device node.
		return KindDevice
	default:
		return KindOther
	}
}
