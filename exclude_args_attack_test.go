package main

import (
	"strings"
	"testing"
)

// TestAttackPatternArgsTakenAsGitignoreLines: -x and --include take gitignore syntax, whose
// files treat a line starting with # as a comment, drop a blank one, and trim trailing
// spaces. Given on the command line, -x '#*#' (Emacs's autosave files) matched nothing, and
// the run archived #notes# and said complete; an empty -x and -x '   ' were no pattern;
// -x 'tmp ' excluded tmp, a name not typed; restore --include '#notes#' restored nothing
// ("no entry matches"). Correct: each is a usage error naming the pattern and how to write
// what was meant (\#, a space escaped). And restore's --include errors spoke of exclude
// patterns and the SOURCE, which restore has neither of.
func TestAttackPatternArgsTakenAsGitignoreLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/#notes#": {content: "n"}, "app/tmp": {content: "t"}, "app/tmp ": {content: "s"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "app.zip", "app"), exitComplete)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "-o", "a.zip", "-x", "#*#", "app"}, `write \# for a #`},
		{[]string{"create", "-o", "b.zip", "-x", "", "app"}, "--exclude"},
		{[]string{"create", "-o", "c.zip", "-x", "   ", "app"}, "--exclude"},
		{[]string{"create", "-o", "d.zip", "-x", "tmp ", "app"}, `write "\ " for a space`},
		{[]string{"restore", "--include", "#notes#", "app.zip", "dest"}, `write \# for a #`},
		{[]string{"restore", "--include", "", "app.zip", "dest"}, "--include"},
	} {
		r := backup(t, runOpts{dir: dir}, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") > 2 {
			t.Errorf("%q: exit %d, stderr %q; want a usage error with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--include", "./app", "app.zip", "dest")
	if r.code != exitUsage || strings.Contains(r.stderr, "exclude") || strings.Contains(r.stderr, "SOURCE") {
		t.Errorf("restore --include ./app: exit %d, stderr %q; want a usage error that speaks of neither exclude patterns nor a SOURCE", r.code, r.stderr)
	}
	// The advice works: escaped, each matches the name typed.
	r = backup(t, runOpts{dir: dir}, "create", "-o", "e.zip", "-x", `\#*#`, "-x", `tmp\ `, "app")
	if r.code != exitComplete || !strings.Contains(r.stderr, " 1 file,") || !strings.Contains(r.stderr, "2 excluded") {
		t.Errorf(`create -x '\#*#' -x 'tmp\ ': exit %d, stderr %q; want app/#notes# and app/tmp\  excluded`, r.code, r.stderr)
	}
}
