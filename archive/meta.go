package archive

import (
	"archive/zip"
	"encoding/binary"
	"io/fs"
	"syscall"

	"backup/format"
)

// OwnerOf returns the owner numbers lstat gave and the mtime's fraction of a second (and its
// seconds, when the extended timestamp cannot hold them), without names or attributes.
func OwnerOf(info fs.FileInfo) format.Meta {
	m := format.Meta{MtimeNsec: info.ModTime().Nanosecond(), Mode: zipMode(info.Mode())}
	if s := info.ModTime().Unix(); s != clampUnix32(s) {
		m.MtimeSec = s
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		m.UID, m.GID = st.Uid, st.Gid
	}
	return m
}

// zipMode is the Unix mode a zip entry of mode holds, as zip.FileHeader.SetMode writes it.
func zipMode(mode fs.FileMode) uint32 {
	var fh zip.FileHeader
	fh.SetMode(mode)
	return fh.ExternalAttrs >> 16
}

// FileMetaOf is OwnerOf for a regular file, with what reuse compares as well.
func FileMetaOf(info fs.FileInfo) format.Meta {
	m := OwnerOf(info)
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		m.CtimeNsec, m.Ino, m.Dev = st.Ctim.Nano(), st.Ino, uint64(st.Dev)
	}
	return m
}

// uxID is Info-ZIP's "new Unix" extra field, which carries the owner's uid and gid:
// unzip -X and bsdtar restore owners from it.
const uxID = 0x7875

// addOwner appends the ux field for m to extra.
func addOwner(extra []byte, m *format.Meta) []byte {
	var ux [4 + 11]byte
	binary.LittleEndian.PutUint16(ux[0:], uxID)
	binary.LittleEndian.PutUint16(ux[2:], 11)
	ux[4] = 1 // version
	ux[5] = 4
	binary.LittleEndian.PutUint32(ux[6:], m.UID)
	ux[10] = 4
	binary.LittleEndian.PutUint32(ux[11:], m.GID)
	return append(extra, ux[:]...)
}

// ownerField reads the uid and gid of a ux field in extra; ok is false without one.
func ownerField(extra []byte) (uid, gid uint32, ok bool) {
	for id, field := range extraFields(extra) {
		if id != uxID || len(field) < 3 || field[0] != 1 {
			continue
		}
		u, rest, ok1 := uxNumber(field[1:])
		g, _, ok2 := uxNumber(rest)
		return u, g, ok1 && ok2
	}
	return 0, 0, false
}

// uxNumber reads one size-prefixed little-endian number of a ux field (1 to 4 bytes here;
// larger ones are zero-padded by the tools that write them).
func uxNumber(b []byte) (uint32, []byte, bool) {
	if len(b) < 1 || int(b[0]) > len(b)-1 {
		return 0, nil, false
	}
	n, num := int(b[0]), b[1:1+int(b[0])]
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(num[i])
	}
	return uint32(v), b[1+n:], v <= 1<<32-1
}
