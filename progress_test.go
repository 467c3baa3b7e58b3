package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// redraw is how the progress line is written: \r, the line, erase to the end of the line.
var redraw = regexp.MustCompile("\r([^\r\n\x1b]*)\x1b\\[K")

// TestProgressInTerminal runs create in a real terminal (a tmux pane) at 40, 80 and 200
// columns, slowed by strace so that the line is drawn a few times. What the pane received
// (pipe-pane) must hold progress lines, none wider than the pane less one column; what the
// pane shows at the end must be the summary alone: no wrapped or stale progress line.
func TestProgressInTerminal(t *testing.T) {
	mustTool(t, "tmux")
	mustTool(t, "strace")
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree := map[string]node{}
	for i := range 12 {
		tree[fmt.Sprintf("a-folder-with-a-long-name/file-with-a-rather-long-name-%d.txt", i)] = node{content: strings.Repeat("line of text\n", 20000)}
	}
	makeTree(t, src, tree)
	for _, width := range []int{40, 80, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			raw, screen := runInPane(t, width, dir, src)
			draws := redraw.FindAllStringSubmatch(raw, -1)
			if len(draws) == 0 {
				t.Fatalf("no progress line was drawn; the pane received:\n%q", raw)
			}
			for _, d := range draws {
				if len(d[1]) > width-1 {
					t.Errorf("progress line of %d columns in %d: %q", len(d[1]), width, d[1])
				}
			}
			var lines []string
			for line := range strings.Lines(screen) {
				if line = strings.TrimRight(line, " \n"); line != "" {
					lines = append(lines, line)
				}
			}
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "backup: complete: 12 files") || lines[1] != "EXIT=0" {
				t.Errorf("the pane shows, at the end:\n%s\nwant the summary line, then EXIT=0", strings.Join(lines, "\n"))
			}
		})
	}
}

// runInPane runs backup create on src in a detached tmux pane of the width given, and
// returns what the pane received and what it shows at the end (wrapped lines joined).
func runInPane(t *testing.T, width int, dir, src string) (raw, screen string) {
	t.Helper()
	socket := filepath.Join(dir, fmt.Sprintf("tmux-%d", width))
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start, rawPath := filepath.Join(dir, "go"), filepath.Join(dir, fmt.Sprintf("raw-%d", width))
	os.Remove(start)
	archive := filepath.Join(dir, fmt.Sprintf("a-%d.zip", width))
	// Each open waits 100 ms, so that the run lasts long enough to draw.
	script := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; strace -f -o /dev/null -e trace=openat -e inject=openat:delay_enter=100000 %s create -j 1 -o %s %s; echo EXIT=$?; sleep 600",
		start, binary, archive, src)
	tmux("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-S", socket, "kill-server").Run() })
	tmux("pipe-pane", "-O", "cat > "+rawPath)
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 1200 { // up to 2 minutes: a slow CI machine, the race detector
		screen = tmux("capture-pane", "-p", "-J")
		if strings.Contains(screen, "EXIT=") {
			data, err := os.ReadFile(rawPath)
			if err != nil {
				t.Fatal(err)
			}
			return string(data), screen
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the run did not end; the pane shows:\n%s", screen)
	return "", ""
}
