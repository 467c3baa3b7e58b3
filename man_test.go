package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestManPages writes the pages as make man does and checks that every command has one,
// that man renders each, and that each carries the command's synopsis and exit codes.
func TestManPages(t *testing.T) {
	t.Parallel()
	mustTool(t, "man")
	dir := t.TempDir()
	if r := backup(t, runOpts{}, "man", dir); r.code != 0 {
		t.Fatalf("backup man exited %d: %s", r.code, r.stderr)
	}
	pages := map[string]string{"backup.1": "backup"}
	for _, c := range available(newRootCmd()) {
		if c.Name() == "help" {
			continue // backup help is what each page is
		}
		pages["backup-"+c.Name()+".1"] = "backup " + c.Name()
	}
	for page, synopsis := range pages {
		t.Run(page, func(t *testing.T) {
			text := renderMan(t, filepath.Join(dir, page))
			if !strings.Contains(text, synopsis) {
				t.Errorf("%s does not show %q:\n%s", page, synopsis, text)
			}
			if page != "backup.1" && page != "backup-help.1" && !exitCodes.MatchString(text) {
				t.Errorf("%s does not end with the exit codes:\n%s", page, text)
			}
			if strings.Contains(text, "[=false]") || strings.Contains(text, "=\"\"") {
				t.Errorf("%s lists flags with pflag's defaults rather than as help does:\n%s", page, text)
			}
		})
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != len(pages) {
		t.Errorf("backup man wrote %d pages (%v), want %d: one per command", len(entries), err, len(pages))
	}
}

// exitCodes is how the last paragraph of a page starts, however man justifies it.
var exitCodes = regexp.MustCompile(`Exit\s+codes:\s+0\b`)

// renderMan renders a page file with man -l, as a user reading it would, in plain text.
func renderMan(t *testing.T, page string) string {
	t.Helper()
	cmd := exec.Command("man", "-l", page)
	cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100", "MAN_KEEP_FORMATTING=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("man -l %s: %v", page, err)
	}
	return string(out)
}
