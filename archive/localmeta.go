package archive

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Beside the fields unzip -t compares, a local header carries what extractors restore from
// it: unzip -X and bsdtar -p take the owner from its extra field, and the modification time
// from its extended timestamp or, without one, its MS-DOS time. Verify checks the owner and
// time the central directory records (against the manifest), so a local header that says
// otherwise would restore, say, a root-owned setuid file that verify passed: the two must
// agree, as every other field must.

// Extra fields that carry an owner in a local header, besides ux (uxID): Info-ZIP's older
// Unix fields, which unzip and libarchive still read.
const (
	izUnixID  = 0x5855 // "UX": times, then a 16-bit uid and gid from byte 8
	izUnix2ID = 0x7855 // "Ux": a 16-bit uid and gid
	pkUnixID  = 0x000d // PKWARE's: atime, mtime, a 16-bit uid and gid, then link data
)

// headerMeta is the time and owner a header gives its entry.
type headerMeta struct {
	dosTime, dosDate uint16
	mtime            uint32 // the extended timestamp's modification time, as stored
	hasMtime         bool
	uid, gid         uint32
	hasOwner         bool
	// localOwner says the owner came from UX or Ux fields alone, which Info-ZIP's zip 2
	// writes in the local header only: its central copies hold no owner, by their spec.
	localOwner bool
	pkMtime    uint32 // the PKWARE Unix field's mtime, which unzip -X restores
	hasPkMtime bool
}

// centralMeta is the time and owner the central record fh gives, read as Entry reads them:
// the first extended timestamp and the first ux field.
func centralMeta(fh *zip.FileHeader) headerMeta {
	m := headerMeta{dosTime: fh.ModifiedTime, dosDate: fh.ModifiedDate}
	m.mtime, m.hasMtime = extMtime(fh.Extra)
	m.uid, m.gid, m.hasOwner = ownerField(fh.Extra)
	for id, field := range extraFields(fh.Extra) {
		if id == pkUnixID && len(field) >= 12 && !m.hasOwner {
			m.uid, m.gid, m.hasOwner = owner16(field[8:]), owner16(field[10:]), true
		}
	}
	return m
}

// localMeta is the time and owner a local header gives, from its MS-DOS time and its extra
// field. Every field that a tool may take them from counts: two that disagree (a second ux
// field, which the last-wins reader takes) are damage.
func localMeta(dosTime, dosDate uint16, extra []byte) (headerMeta, error) {
	m := headerMeta{dosTime: dosTime, dosDate: dosDate}
	for id, field := range extraFields(extra) {
		var uid, gid uint32
		owner := false
		switch {
		case id == extTimeID && len(field) >= 5 && field[0]&1 != 0:
			t := binary.LittleEndian.Uint32(field[1:])
			if m.hasMtime && t != m.mtime {
				return m, fmt.Errorf("damaged: local header holds two modification times (%s, %s)", extTimeString(m.mtime, true), extTimeString(t, true))
			}
			m.mtime, m.hasMtime = t, true
		case id == uxID && len(field) >= 1 && field[0] == 1:
			u, rest, ok1 := uxNumber(field[1:])
			g, _, ok2 := uxNumber(rest)
			if !ok1 || !ok2 {
				return m, errOwnerCutShort // unzip -X and bsdtar still take what is there
			}
			uid, gid, owner = u, g, true
		case id == izUnixID && len(field) > 8:
			if len(field) < 12 {
				return m, errOwnerCutShort
			}
			uid, gid, owner = owner16(field[8:]), owner16(field[10:]), true
		case id == izUnix2ID && len(field) > 0:
			if len(field) < 4 {
				return m, errOwnerCutShort
			}
			uid, gid, owner = owner16(field), owner16(field[2:]), true
		case id == pkUnixID && len(field) >= 12:
			m.pkMtime, m.hasPkMtime = binary.LittleEndian.Uint32(field[4:]), true
			uid, gid, owner = owner16(field[8:]), owner16(field[10:]), true
		}
		if !owner {
			continue
		}
		if m.hasOwner && (uid != m.uid || gid != m.gid) {
			return m, fmt.Errorf("damaged: local header gives two owners (%s, %s)", ownerString(m.uid, m.gid, true), ownerString(uid, gid, true))
		}
		local := id == izUnixID || id == izUnix2ID
		m.localOwner = local && (!m.hasOwner || m.localOwner)
		m.uid, m.gid, m.hasOwner = uid, gid, true
	}
	return m, nil
}

// owner16 reads a 16-bit uid or gid, as the older Unix fields hold them.
func owner16(b []byte) uint32 { return uint32(le16(b)) }

// errOwnerCutShort is an owner field too short for its uid and gid, which extractors read
// as far as it goes.
var errOwnerCutShort = errors.New("damaged: local header's owner field is cut short")

// compareMeta reports the first of owner and time in which the local header's meta l
// disagrees with the central directory's c.
func compareMeta(l, c headerMeta) error {
	switch {
	case l.hasOwner != c.hasOwner && !(l.localOwner && !c.hasOwner) || l.hasOwner && c.hasOwner && (l.uid != c.uid || l.gid != c.gid):
		return fmt.Errorf("damaged: local header gives owner %s, the central directory %s",
			ownerString(l.uid, l.gid, l.hasOwner), ownerString(c.uid, c.gid, c.hasOwner))
	case l.hasMtime != c.hasMtime || l.hasMtime && l.mtime != c.mtime:
		return fmt.Errorf("damaged: local header says modified %s, the central directory %s",
			extTimeString(l.mtime, l.hasMtime), extTimeString(c.mtime, c.hasMtime))
	case l.hasPkMtime && c.hasMtime && l.pkMtime != c.mtime:
		return fmt.Errorf("damaged: local header's Unix field says modified %s, the central directory %s",
			extTimeString(l.pkMtime, true), extTimeString(c.mtime, c.hasMtime))
	case l.dosTime != c.dosTime || l.dosDate != c.dosDate:
		return fmt.Errorf("damaged: local header says MS-DOS time %s, the central directory %s",
			dosTime(l.dosDate, l.dosTime).Format(time.DateTime), dosTime(c.dosDate, c.dosTime).Format(time.DateTime))
	}
	return nil
}

func ownerString(uid, gid uint32, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("%d:%d", uid, gid)
}

func extTimeString(t uint32, ok bool) string {
	if !ok {
		return "no time"
	}
	return time.Unix(int64(int32(t)), 0).UTC().Format(time.RFC3339)
}

// extMtime is the modification time of the first extended timestamp in extra that has one,
// as stored; the field modTime reads.
func extMtime(extra []byte) (uint32, bool) {
	for id, field := range extraFields(extra) {
		if id == extTimeID && len(field) >= 5 && field[0]&1 != 0 {
			return binary.LittleEndian.Uint32(field[1:]), true
		}
	}
	return 0, false
}

// metaExtra is an extra field that gives e's owner and extended modification time as its
// central record did (Entry keeps no copy of that field): what centralMeta reads of it,
// padded with empty fields of ID 0 to the length of the central one, which readLocal reads
// along with the local header.
func (e *Entry) metaExtra() []byte {
	b := make([]byte, 0, max(int(e.hdr.extra), 24))
	if e.HasOwner {
		b = binary.LittleEndian.AppendUint16(b, uxID)
		b = append(binary.LittleEndian.AppendUint16(b, 11), 1, 4)
		b = append(binary.LittleEndian.AppendUint32(b, e.UID), 4)
		b = binary.LittleEndian.AppendUint32(b, e.GID)
	}
	if e.hdr.bits&hdrExtTime != 0 {
		// Modified is the stored count of seconds, read signed or unsigned: either way its
		// low 32 bits are the count as stored.
		b = binary.LittleEndian.AppendUint16(b, extTimeID)
		b = append(binary.LittleEndian.AppendUint16(b, 5), 1)
		b = binary.LittleEndian.AppendUint32(b, uint32(e.Modified.Unix()))
	}
	if n := int(e.hdr.extra); len(b) < n {
		b = append(b, make([]byte, n-len(b))...)
	}
	return b
}
