package archive

import (
	"archive/zip"
	"hash/crc32"
	"io/fs"
	"syscall"

	"backup/format"
)

// AddSymlink adds a symlink entry as Info-ZIP's zip -y writes it: mode S_IFLNK|0777 in the
// external attributes and the target's bytes as the stored content, which unzip, bsdtar and
// 7-Zip turn back into a symlink. The link is never followed. Errors as for AddDir.
func (w *Writer) AddSymlink(name string, info fs.FileInfo, target string, meta *format.Meta) error {
	if err := checkLength(name); err != nil {
		return w.addLost(name, info, err)
	}
	return w.add(&item{name: name, info: info, meta: meta, target: &target})
}

func (w *Writer) writeSymlink(it *item) error {
	data := []byte(*it.target)
	fh := fileHeader(it.name, it.info, zip.Store, crc32.ChecksumIEEE(data), int64(len(data)), int64(len(data)), it.meta)
	zf, err := w.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	if _, err := zf.Write(data); err != nil {
		return err
	}
	if w.opts.OnSymlink != nil {
		w.opts.OnSymlink(format.Symlink{Path: it.name, Target: *it.target, Meta: metaOrOwner(it)})
	}
	return nil
}

func (w *Writer) writeDir(it *item) error {
	if _, err := w.zw.CreateRaw(dirHeader(it.name, it.info, it.meta)); err != nil {
		return err
	}
	if w.opts.OnDir != nil {
		w.opts.OnDir(format.Dir{Path: it.name, Meta: metaOrOwner(it)})
	}
	return nil
}

func metaOrOwner(it *item) format.Meta {
	if it.meta != nil {
		return *it.meta
	}
	return OwnerOf(it.info)
}

// fileID is a file's identity: files of one run with the same one are hard links.
type fileID struct{ dev, ino uint64 }

// LinkGroups numbers the hard-link groups of one run's files. A dry run, which has no
// Writer, keeps one of its own, so that it counts the groups the run would store. Not safe
// for concurrent use: the walk's goroutine alone adds files.
type LinkGroups struct{ ids map[fileID]int }

// Of returns the hard-link group of a file with more than one link, numbered in the order
// the groups are met (the reporter drops groups of which one member only was stored); 0 for
// a file with one link.
func (g *LinkGroups) Of(info fs.FileInfo) int {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return 0
	}
	id := fileID{uint64(st.Dev), st.Ino}
	if g.ids == nil {
		g.ids = map[fileID]int{}
	}
	n, ok := g.ids[id]
	if !ok {
		n = len(g.ids) + 1
		g.ids[id] = n
	}
	return n
}
