package engine_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"backup/engine"
	"backup/format"
	"backup/skiprules"
)

// log is what a run told its hooks: a reporter as small as a test needs, safe for the two
// goroutines that call the hooks.
type log struct {
	mu       sync.Mutex
	files    []format.File
	dirs     []format.Dir
	symlinks []format.Symlink
	skipped  []string
	excluded []string // name=rule
	warnings []error
	noReuse  []error
	walking  int
}

func (l *log) hooks() engine.Hooks {
	lock := func(f func()) { l.mu.Lock(); defer l.mu.Unlock(); f() }
	return engine.Hooks{
		File:    func(f format.File) { lock(func() { l.files = append(l.files, f) }) },
		Dir:     func(d format.Dir) { lock(func() { l.dirs = append(l.dirs, d) }) },
		Symlink: func(s format.Symlink) { lock(func() { l.symlinks = append(l.symlinks, s) }) },
		Skip:    func(name string, _ skiprules.Kind) { lock(func() { l.skipped = append(l.skipped, name) }) },
		Exclude: func(name, rule string) { lock(func() { l.excluded = append(l.excluded, name+"="+rule) }) },
		Warn:    func(err error) { lock(func() { l.warnings = append(l.warnings, err) }) },
		NoReuse: func(err error) { l.noReuse = append(l.noReuse, err) },
		Walking: func() func() { l.walking++; return func() { l.walking++ } },
		Manifest: func() *format.Manifest {
			l.mu.Lock()
			defer l.mu.Unlock()
			byPath := func(a, b string) int { return strings.Compare(a, b) }
			slices.SortFunc(l.files, func(a, b format.File) int { return byPath(a.Path, b.Path) })
			slices.SortFunc(l.dirs, func(a, b format.Dir) int { return byPath(a.Path, b.Path) })
			slices.SortFunc(l.symlinks, func(a, b format.Symlink) int { return byPath(a.Path, b.Path) })
			return &format.Manifest{Status: "complete", Files: l.files, Dirs: l.dirs, Symlinks: l.symlinks,
				Skipped: []format.Skipped{}, Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
		},
	}
}

func (l *log) fileNames() []string {
	var names []string
	for _, f := range l.files {
		names = append(names, f.Path)
	}
	slices.Sort(names)
	return names
}

// tree makes files (name: content; a trailing "->" makes a symlink to the rest) under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// entries lists the archive's entries but the manifest.
func entries(t *testing.T, zr *zip.Reader) []string {
	t.Helper()
	var names []string
	for _, f := range zr.File {
		if f.Name != format.ManifestName {
			names = append(names, f.Name)
		}
	}
	return names
}

func openZip(t *testing.T, path string) *zip.Reader {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func leftIn(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// TestRunFile: a run into a file Output walks, stores, tells the hooks, and leaves the whole
// archive at its temp path until Commit puts it in place; it reads back as written.
func TestRunFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree(t, src, map[string]string{"a": "alpha", "sub/b": "beta", "link": "->a"})
	if err := syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "app.zip")
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: src, Name: "app"}},
		Rules: skiprules.Rules{StoreSymlinks: true}, Level: 6, Output: engine.Output{Path: path}})
	e.Hooks = l.hooks()
	res, err := e.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the archive is at its path before Commit: %v", err)
	}
	if err := res.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := leftIn(t, out); !slices.Equal(got, []string{"app.zip"}) {
		t.Errorf("output folder holds %q, want only the archive", got)
	}
	got := entries(t, openZip(t, path))
	if want := []string{"app/", "app/a", "app/link", "app/sub/", "app/sub/b"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if got := l.fileNames(); !slices.Equal(got, []string{"app/a", "app/sub/b"}) || len(l.symlinks) != 1 || len(l.dirs) != 2 {
		t.Errorf("hooks told of files %q, %d symlinks, %d dirs; want a and sub/b, 1, 2", got, len(l.symlinks), len(l.dirs))
	}
	if !slices.Equal(l.skipped, []string{"app/fifo"}) || l.walking != 2 {
		t.Errorf("skipped %q, walking called %d times; want the FIFO, and start and end", l.skipped, l.walking)
	}
	data, _ := os.ReadFile(path)
	sum := sha256.Sum256(data)
	if res.Sum.Size != int64(len(data)) || res.Sum.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("Sum %d %s, want the file's %d %x", res.Sum.Size, res.Sum.SHA256, len(data), sum)
	}
	if err := res.ReadBack(t.Context(), path); err != nil {
		t.Errorf("ReadBack: %v", err)
	}
	if files, bytes, _ := e.Progress(); files != 2 || bytes != int64(len("alpha")+len("beta")) {
		t.Errorf("Progress %d files %d bytes, want 2 and 9", files, bytes)
	}
	if files, bytes, err := e.Count(t.Context()); err != nil || files != 2 || bytes != 9 {
		t.Errorf("Count %d files %d bytes (%v), want 2 and 9", files, bytes, err)
	}
}

// TestRunDryRun tells the hooks what would be stored and writes nothing.
func TestRunDryRun(t *testing.T) {
	dir := t.TempDir()
	tree(t, filepath.Join(dir, "app"), map[string]string{"a": "alpha", "sub/b": "beta"})
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: filepath.Join(dir, "app"), Name: "app"}}, DryRun: true,
		Output: engine.Output{Path: filepath.Join(dir, "app.zip")}})
	e.Hooks = l.hooks()
	e.Hooks.Manifest = nil // a dry run needs none
	if _, err := e.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := l.fileNames(); !slices.Equal(got, []string{"app/a", "app/sub/b"}) || l.walking != 0 {
		t.Errorf("dry run told of %q, walking %d; want a and sub/b, 0", got, l.walking)
	}
	if got := leftIn(t, dir); !slices.Equal(got, []string{"app"}) {
		t.Errorf("dry run left %q", got)
	}
}

// TestRunStream writes the archive into a stream: its Sum is the stream's bytes', and a
// regular file the stream is, inside the SOURCE, is not archived.
func TestRunStream(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree(t, src, map[string]string{"a": "alpha"})
	f, err := os.Create(filepath.Join(src, "self.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: src, Name: "app"}}, Level: 1,
		Output: engine.Output{Path: "-", Stream: f}})
	e.Hooks = l.hooks()
	res, err := e.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, openZip(t, f.Name())); !slices.Equal(got, []string{"app/", "app/a"}) {
		t.Errorf("entries %q, want app/ and app/a", got)
	}
	if !slices.Equal(l.excluded, []string{"app/self.zip=" + skiprules.RuleSelf}) {
		t.Errorf("excluded %q, want the stream's own file", l.excluded)
	}
	data, _ := os.ReadFile(f.Name())
	if res.Sum.Size != int64(len(data)) {
		t.Errorf("Sum.Size %d, want %d", res.Sum.Size, len(data))
	}
}

// TestRunPick takes only the picked names and the folders above them, and stores a source
// that is a symlink as the link, never read through: a restore's before-state.
func TestRunPick(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	tree(t, dest, map[string]string{"www/a/b": "b", "www/a/c": "c", "www/d": "d", "other/x": "x", "ln": "->other"})
	sources, pick := engine.Pick(dest, []string{"www/a/b", "ln"})
	if len(sources) != 2 || sources[0] != (engine.Source{Path: filepath.Join(dest, "www"), Name: "www"}) {
		t.Fatalf("sources %+v", sources)
	}
	path := filepath.Join(dir, "before.zip")
	var l log
	e := engine.New(engine.Options{Sources: sources, Pick: pick, Rules: skiprules.Rules{StoreSymlinks: true},
		Created: []format.Created{{Path: "www/new"}}, Output: engine.Output{Path: path}})
	e.Hooks = l.hooks()
	res, err := e.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(); err != nil {
		t.Fatal(err)
	}
	got := entries(t, openZip(t, path))
	if want := []string{"www/", "www/a/", "www/a/b", "ln"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if len(res.Manifest.Created) != 1 || res.Manifest.Created[0].Path != "www/new" {
		t.Errorf("manifest's created %+v, want www/new", res.Manifest.Created)
	}
}

// TestRunUntrustedReference: a reference without a receipt is not used, NoReuse says why,
// and the run reads every file.
func TestRunUntrustedReference(t *testing.T) {
	dir := t.TempDir()
	tree(t, filepath.Join(dir, "app"), map[string]string{"a": "alpha"})
	ref := filepath.Join(dir, "ref.zip")
	if err := os.WriteFile(ref, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: filepath.Join(dir, "app"), Name: "app"}},
		Reference: ref, Output: engine.Output{Path: filepath.Join(dir, "new.zip")}})
	e.Hooks = l.hooks()
	res, err := e.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Abort()
	if len(l.noReuse) != 1 || !strings.HasPrefix(l.noReuse[0].Error(), ref+": its receipt: ") {
		t.Errorf("NoReuse told %v, want one error about the reference's receipt", l.noReuse)
	}
	if len(l.files) != 1 || l.files[0].Reused {
		t.Errorf("files %+v, want a, read", l.files)
	}
}

// TestRunVerifyCatchesDamage: Verify reads the temp archive back; damage found there fails
// the run and removes the temp file.
func TestRunVerifyCatchesDamage(t *testing.T) {
	dir := t.TempDir()
	tree(t, filepath.Join(dir, "app"), map[string]string{"a": strings.Repeat("abc", 1000)})
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "a.zip")
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: filepath.Join(dir, "app"), Name: "app"}}, Level: 6,
		Verify: true, Output: engine.Output{Path: path}, BeforeVerify: func(temp string) { flip(t, temp, "app/a") }})
	e.Hooks = l.hooks()
	_, err := e.Run(t.Context())
	if err == nil || !strings.HasPrefix(err.Error(), "verifying archive "+path+": app/a: ") {
		t.Errorf("Run: %v, want the read-back's problem with app/a", err)
	}
	if got := leftIn(t, out); len(got) != 0 {
		t.Errorf("left %q after a failed read-back", got)
	}
}

// flip flips a byte in the middle of the named entry's data in the archive at path.
func flip(t *testing.T, path, name string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Error(err)
		return
	}
	for _, f := range zr.File {
		if f.Name == name {
			off, _ := f.DataOffset()
			data[off+int64(f.CompressedSize64)/2] ^= 1
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Error(err)
	}
}

// TestRunMissingSource fails before anything is written, naming the source.
func TestRunMissingSource(t *testing.T) {
	dir := t.TempDir()
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: filepath.Join(dir, "gone"), Name: "gone"}},
		Output: engine.Output{Path: filepath.Join(dir, "a.zip")}})
	e.Hooks = l.hooks()
	_, err := e.Run(t.Context())
	if want := "source " + filepath.Join(dir, "gone") + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Run: %v, want %q", err, want)
	}
	if got := leftIn(t, dir); len(got) != 0 {
		t.Errorf("left %q", got)
	}
}

// TestRunReplacesItsEarlierArchive: an archive at the Path inside the SOURCE (an earlier
// run's) is never archived, and Commit without Replace refuses it.
func TestRunReplacesItsEarlierArchive(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree(t, src, map[string]string{"a": "alpha", "app.zip": "old"})
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: src, Name: "app"}},
		Output: engine.Output{Path: filepath.Join(src, "app.zip")}})
	e.Hooks = l.hooks()
	res, err := e.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Abort()
	if got := l.fileNames(); !slices.Equal(got, []string{"app/a"}) {
		t.Errorf("stored %q, want only a (the archive and its temp file excluded)", got)
	}
	if err := res.Commit(); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Commit over the earlier archive without Replace: %v, want fs.ErrExist", err)
	}
}
