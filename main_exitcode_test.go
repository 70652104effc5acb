package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodesByName: every function of the root package that returns a
// launch.ExitCode (the commands, and helpers like fail) returns it by
// name, never as a number, so that the codes are defined once, in
// internal/launch, and a reader sees which one each path takes.
func TestExitCodesByName(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var typ *ast.FuncType
			var body *ast.BlockStmt
			switch fn := n.(type) {
			case *ast.FuncDecl:
				typ, body = fn.Type, fn.Body
			case *ast.FuncLit:
				typ, body = fn.Type, fn.Body
			default:
				return true
			}
			if body == nil || !returnsExitCode(typ) {
				return true
			}
			checked++
			ast.Inspect(body, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // checked on its own
				}
				if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
					if lit, ok := r.Results[0].(*ast.BasicLit); ok {
						t.Errorf("%s: return %s: name the exit code (launch.Exit...)", fset.Position(r.Pos()), lit.Value)
					}
				}
				return true
			})
			return true
		})
	}
	if checked < 10 {
		t.Errorf("only %d functions return a launch.ExitCode; the check looks in the wrong place", checked)
	}
}

// returnsExitCode tells whether a function's one result is launch.ExitCode.
func returnsExitCode(typ *ast.FuncType) bool {
	if typ.Results == nil || len(typ.Results.List) != 1 {
		return false
	}
	sel, ok := typ.Results.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "launch" && sel.Sel.Name == "ExitCode"
}
