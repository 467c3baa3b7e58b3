package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCallsCutShortGoThroughEintr checks that no package makes directly, through x/sys/unix
// or syscall, a call that package eintr makes: a signal can cut such a call short on CIFS
// and FUSE mounts, and only eintr repeats it (or, for a call that makes or moves a name,
// tells whether the try was done). The walker repeats its own calls; bench's programs are
// tools.
func TestCallsCutShortGoThroughEintr(t *testing.T) {
	wrapped := eintrCalls(t)
	if len(wrapped) < 10 {
		t.Fatalf("found %d calls in package eintr; the parse is broken", len(wrapped))
	}
	for _, name := range goFiles(t, ".", "bench", "eintr", "walker") {
		for _, call := range directCalls(t, name, wrapped) {
			at, fn, _ := strings.Cut(call, " ")
			t.Errorf("%s: %s: call eintr's, which repeats it when a signal cuts it short", at, fn)
		}
	}
}

// goFiles is the non-test Go files below dir, but for those below the folders skip.
func goFiles(t *testing.T, dir string, skip ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || slices.Contains(skip, path)):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// eintrCalls is the names of the exported functions of package eintr.
func eintrCalls(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, name := range goFiles(t, "eintr") {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names
}

// directCalls lists, as "file:line unix.Name", the calls in the file name of a function of
// x/sys/unix or syscall whose name is in wrapped.
func directCalls(t *testing.T, name string, wrapped []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkgOf := map[string]bool{} // the names the file gives unix and syscall
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path != "golang.org/x/sys/unix" && path != "syscall" {
			continue
		}
		local := path[strings.LastIndexByte(path, '/')+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		pkgOf[local] = true
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkgOf[pkg.Name] && slices.Contains(wrapped, sel.Sel.Name) {
			found = append(found, fset.Position(call.Pos()).String()+" "+pkg.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return found
}
