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
// and FUSE mounts, and only eintr repeats it (or, for a call that changes a name, tells
// whether the try was done). Nor through os, which repeats a call that changes a name
// blindly: a create with O_EXCL, a temp file or folder, a link, a rename, a symlink or a
// removal. (The walker repeats its reads and its attribute calls itself, with their partial
// reads and ERANGE; eintr has none of them.) Bench's programs are tools.
func TestCallsCutShortGoThroughEintr(t *testing.T) {
	wrapped := eintrCalls(t)
	if len(wrapped) < 10 {
		t.Fatalf("found %d calls in package eintr; the parse is broken", len(wrapped))
	}
	for _, name := range goFiles(t, ".", "bench", "eintr") {
		for _, call := range directCalls(t, name, wrapped) {
			at, fn, _ := strings.Cut(call, " ")
			t.Errorf("%s: %s: make it through eintr, which repeats it when a signal cuts it short, or finds it done", at, fn)
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

// osBlind are the functions of os that make a call changing a name, which os repeats
// blindly when a signal cuts it short; os.OpenFile is one with O_EXCL, or with flags the
// test cannot read (a variable).
var osBlind = []string{"CreateTemp", "MkdirTemp", "Remove", "Link", "Rename", "Symlink"}

// directCalls lists, as "file:line pkg.Name", the calls in the file name of a function of
// x/sys/unix or syscall whose name is in wrapped, and of those of os that osBlind lists.
func directCalls(t *testing.T, name string, wrapped []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sys, osName := map[string]bool{}, "" // the names the file gives unix and syscall, and os
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndexByte(path, '/')+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch path {
		case "golang.org/x/sys/unix", "syscall":
			sys[local] = true
		case "os":
			osName = local
		}
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
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		fn := sel.Sel.Name
		direct := sys[pkg.Name] && slices.Contains(wrapped, fn) ||
			pkg.Name == osName && (slices.Contains(osBlind, fn) || fn == "OpenFile" && len(call.Args) == 3 && mayExcl(call.Args[1]))
		if direct {
			found = append(found, fset.Position(call.Pos()).String()+" "+pkg.Name+"."+fn)
		}
		return true
	})
	return found
}

// mayExcl reports whether the flags flag may hold O_EXCL: it names O_EXCL, or a variable (a
// bare name, where the flags it can read are package constants, os.O_RDONLY…, and local
// constants of those).
func mayExcl(flag ast.Expr) bool {
	qualified := map[*ast.Ident]bool{}
	found := false
	ast.Inspect(flag, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			qualified[n.Sel] = true
			if x, ok := n.X.(*ast.Ident); ok {
				qualified[x] = true
			}
		case *ast.Ident:
			found = found || n.Name == "O_EXCL" || !qualified[n] && !constOf(n, mayExcl)
		}
		return !found
	})
	return found
}

// constOf reports whether id is a constant whose value, as written, is not bad.
func constOf(id *ast.Ident, bad func(ast.Expr) bool) bool {
	if id.Obj == nil || id.Obj.Kind != ast.Con {
		return false
	}
	spec, ok := id.Obj.Decl.(*ast.ValueSpec)
	if !ok || len(spec.Values) != len(spec.Names) {
		return false
	}
	for i, name := range spec.Names {
		if name.Name == id.Name {
			return !bad(spec.Values[i])
		}
	}
	return false
}
