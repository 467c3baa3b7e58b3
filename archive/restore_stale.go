package archive

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A restore killed while it wrote (SIGKILL, a power cut) leaves its temp file behind: the
// name is in no archive, so a re-run would keep it in DEST for ever. The re-run removes
// those of the paths it restores, recognised by name: ".NAME.restore-<base 36>" (a file or a
// symlink being written) or ".NAME.link-<base 36>" (a hard link being made), beside NAME.

// findStale lists the temp files an earlier restore left beside the selected entries, in
// the folders that exist in the destination.
func (p *RestorePlan) findStale() {
	prefixes := map[string]map[string]bool{} // folder -> the temp names' stems in it
	for _, e := range p.entries {
		if e.IsDir {
			continue
		}
		dir := parentOf(e.Name)
		if st := p.lstat(dir); dir != "" && (st.missing || st.err != nil || !st.mode.IsDir()) {
			continue
		}
		if prefixes[dir] == nil {
			prefixes[dir] = map[string]bool{}
		}
		base := e.Name[strings.LastIndexByte(e.Name, '/')+1:]
		stem := "." + base
		if len(stem) > 200 {
			stem = stem[:200]
		}
		prefixes[dir][stem+".restore-"] = true
		prefixes[dir]["."+base+".link-"] = true
	}
	for dir, stems := range prefixes {
		names, err := readNames(filepath.Join(p.Dest, filepath.FromSlash(dir)))
		if err != nil {
			continue // nothing found is nothing removed; writing there will say what is wrong
		}
		for _, name := range names {
			if isStale(name, stems) {
				p.stale = append(p.stale, joinName(dir, name))
			}
		}
	}
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// isStale reports whether name is one of stems followed by a base-36 number.
func isStale(name string, stems map[string]bool) bool {
	for _, sep := range []string{".restore-", ".link-"} {
		i := strings.LastIndex(name, sep)
		if i < 0 || !stems[name[:i+len(sep)]] {
			continue
		}
		if n := name[i+len(sep):]; n != "" && strings.Trim(n, "0123456789abcdefghijklmnopqrstuvwxyz") == "" {
			return true
		}
	}
	return false
}

func joinName(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// removeStale removes the temp files findStale found: regular files and symlinks only.
func (p *RestorePlan) removeStale(t *destTree) {
	for _, name := range p.stale {
		dfd, err := t.dir(parentOf(name), false)
		if err != nil {
			continue
		}
		base := name[strings.LastIndexByte(name, '/')+1:]
		var st unix.Stat_t
		if unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if m := st.Mode & unix.S_IFMT; m == unix.S_IFREG || m == unix.S_IFLNK {
			unix.Unlinkat(dfd, base, 0)
		}
	}
}
