package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bashCompletionLib is where Debian's bash-completion package puts the functions
// (_get_comp_words_by_ref) that cobra's bash script calls.
const bashCompletionLib = "/usr/share/bash-completion/bash_completion"

// TestBashCompletion completes words through the script `backup completion bash` prints,
// in a real bash, as a user pressing TAB would: the script calls the built binary back.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	mustTool(t, "bash")
	if _, err := os.Stat(bashCompletionLib); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("this test needs the bash-completion package, and CI installs it: %v", err)
		}
		t.Skip("needs bash-completion")
	}
	script := filepath.Join(t.TempDir(), "backup.bash")
	out, err := exec.Command(binary, "completion", "bash").Output()
	if err != nil {
		t.Fatalf("backup completion bash: %v", err)
	}
	if err := os.WriteFile(script, out, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want []string
	}{
		{"backup cre", []string{"create"}},
		{"backup create --ex", []string{"--exclude", "--exclude-caches", "--exclude-from", "--exec-after", "--exec-before", "--exec-timeout"}},
		{"backup create --exc", []string{"--exclude", "--exclude-caches", "--exclude-from"}},
		{"backup pr", []string{"prune"}},
		{"backup completion ", []string{"bash", "fish", "zsh"}},
		// Both --symlinks take MODE skip or store (docs/create.md, docs/restore.md):
		// restore's offered file names instead.
		{"backup create --symlinks ", []string{"skip", "store"}},
		{"backup restore --symlinks ", []string{"skip", "store"}},
		// --level takes N, 0 to 9: it offered the current folder's file names.
		{"backup create --level ", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got := completeBash(t, script, tt.line)
			if !slices.Equal(got, tt.want) {
				t.Errorf("completing %q gave %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

// completeBash sets up bash's completion variables for line, with the cursor at its end,
// runs the script's completion function and returns the candidates, sorted.
func completeBash(t *testing.T, script, line string) []string {
	t.Helper()
	prog := `source "$1"; source "$2"
COMP_LINE=$3; COMP_POINT=${#COMP_LINE}
read -r -a COMP_WORDS <<<"$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
__start_backup backup
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog, "bash", bashCompletionLib, script, line)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"))
	// compopt complains on stderr outside a real TAB press; the candidates are on stdout.
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	var words []string
	for _, w := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if w = strings.TrimSpace(w); w != "" {
			words = append(words, w)
		}
	}
	slices.Sort(words)
	return words
}
