package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the usage blocks of README.md and docs/*.md from the commands' help")

// usageBlock is a code block of the README or a docs page that help writes: a marker line
// naming it, then the fenced block.
var usageBlock = regexp.MustCompile("(?m)^<!-- usage ([a-z]+) -->\n```\n([^`]*)```\n")

// docPages are the pages a reader of the repository reads: the README, the front door, and
// the reference in docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// TestREADMEUsage checks that the usage blocks of README.md and docs/*.md show each
// command's synopsis and flags exactly as --help does, each block on exactly one page.
// After changing a flag, go test -run TestREADMEUsage -update-readme . rewrites the blocks
// wherever they stand; the prose around them is the author's to keep true.
func TestREADMEUsage(t *testing.T) {
	want := usageBlocks(newRootCmd())
	seen := map[string][]string{} // block name -> pages holding it
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := usageBlock.ReplaceAllStringFunc(string(data), func(block string) string {
			m := usageBlock.FindStringSubmatch(block)
			name, got := m[1], m[2]
			seen[name] = append(seen[name], page)
			if _, ok := want[name]; !ok {
				t.Errorf("%s: usage block %q names no command with flags of its own", page, name)
				return block
			}
			if got != want[name] && !*updateREADME {
				t.Errorf("%s: usage block %q differs from help; rerun with -update-readme.\ngot:\n%s\nwant:\n%s", page, name, got, want[name])
			}
			return fmt.Sprintf("<!-- usage %s -->\n```\n%s```\n", name, want[name])
		})
		if *updateREADME && text != string(data) {
			if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name := range want {
		switch pages := seen[name]; {
		case len(pages) == 0:
			t.Errorf("no page has usage block %q (a line <!-- usage %s --> before a code block in README.md or docs/*.md)", name, name)
		case len(pages) > 1:
			t.Errorf("usage block %q is on more than one page: %s", name, strings.Join(pages, ", "))
		}
	}
}

// usageBlocks is what the pages show: every command's usage line under "commands", and
// for each command with flags of its own, its usage line and flags as its help lists them.
func usageBlocks(root *cobra.Command) map[string]string {
	blocks := map[string]string{}
	var synopsis strings.Builder
	for _, c := range available(root) {
		c.InitDefaultHelpFlag()
		fmt.Fprintln(&synopsis, c.UseLine())
		if hasOwnFlags(c) {
			blocks[c.Name()] = c.UseLine() + "\n\n" + flagUsages(c.Flags(), helpWidth)
		}
	}
	blocks["commands"] = synopsis.String()
	return blocks
}

// hasOwnFlags reports whether c has a flag other than -h.
func hasOwnFlags(c *cobra.Command) bool {
	own := false
	c.Flags().VisitAll(func(f *pflag.Flag) { own = own || (f.Name != "help" && !f.Hidden) })
	return own
}

// TestDocsLinks checks that every relative link of README.md and docs/*.md leads to a file
// of the repository, and every #anchor to a heading of the page it names, as GitHub makes
// anchors: the pages send readers to each other, and a moved section must not strand them.
func TestDocsLinks(t *testing.T) {
	anchors := map[string][]string{} // page -> its headings' anchors
	for _, page := range docPages(t) {
		for _, link := range markdownLinks(t, page) {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), target)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %q: %v", page, link, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				t.Errorf("%s: link %q: an anchor into a file that is not markdown", page, link)
				continue
			}
			if _, ok := anchors[file]; !ok {
				anchors[file] = headingAnchors(t, file)
			}
			if !slices.Contains(anchors[file], anchor) {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s (it has %s)", page, link, file, anchor, strings.Join(anchors[file], " "))
			}
		}
	}
}

var (
	// mdLink is an inline link or image: [text](target), the target without spaces.
	mdLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	// heading is an ATX heading line.
	heading = regexp.MustCompile(`^#{1,6} +(.*?) *#*$`)
	// linkText keeps the text of a link inside a heading.
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// markdownLines are the lines of a page outside fenced code blocks.
func markdownLines(t *testing.T, page string) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	fenced := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, line)
		}
	}
	return lines
}

// markdownLinks are the targets of a page's links, outside code.
func markdownLinks(t *testing.T, page string) []string {
	t.Helper()
	var links []string
	for _, line := range markdownLines(t, page) {
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			links = append(links, m[1])
		}
	}
	return links
}

// headingAnchors are the anchors GitHub gives a page's headings: the text in lower case,
// without punctuation, spaces made hyphens; a repeated anchor gets -1, -2….
func headingAnchors(t *testing.T, page string) []string {
	t.Helper()
	var anchors []string
	count := map[string]int{}
	for _, line := range markdownLines(t, page) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				return unicode.ToLower(r)
			}
			return -1
		}, linkText.ReplaceAllString(m[1], "$1"))
		if n := count[slug]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", slug, n))
		} else {
			anchors = append(anchors, slug)
		}
		count[slug]++
	}
	return anchors
}
