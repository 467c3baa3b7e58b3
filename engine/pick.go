package engine

import (
	"path/filepath"
	"strings"
)

// Pick returns the sources and the pick set (Options.Pick) that take the given names and the
// folders above them, and nothing else: names are slash-separated paths below dir (as a
// restore plan gives them), and each one's top folder is a source, stored as itself.
func Pick(dir string, names []string) ([]Source, map[string]bool) {
	var sources []Source
	pick := map[string]bool{}
	for _, name := range names {
		top, _, _ := strings.Cut(name, "/")
		if !pick[top] {
			sources = append(sources, Source{Path: filepath.Join(dir, filepath.FromSlash(top)), Name: top})
		}
		for n := name; n != "" && !pick[n]; n = parentName(n) {
			pick[n] = true
		}
	}
	return sources, pick
}

func parentName(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}
