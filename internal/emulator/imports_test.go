package emulator

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowedImports is the one-way graph of the package doc ("# Packages"): for each subpackage, the
// project packages its non-test files may import. A subpackage missing here fails the test, so a
// new one is placed in the graph when it is made.
var allowedImports = map[string][]string{
	"apierr":       nil,
	"gketpu":       nil,
	"machines":     nil,
	"kubeproc":     nil,
	"raydashboard": nil,
	"rules":        {"emulator/apierr", "emulator/gketpu", "emulator/machines"},
	"tpuwebhook":   {"emulator/gketpu"},
	"nodeagent":    {"emulator/apierr", "emulator/gketpu", "emulator/rules"},
	"clusterkube":  {"emulator/kubeproc", "emulator/nodeagent"},
	"rayproxy":     {"emulator/raydashboard"},
	// Test helpers, imported by tests only.
	"rules/rulestest":           nil,
	"tpuwebhook/tpuwebhooktest": nil,
	// The emulator's command imports the facade only.
	"cmd/raytpu-emulator": {"emulator"},
}

// TestImportsPointOneWay reads the imports of every subpackage's non-test files: none imports the
// facade (but its command), a package above it in the graph, or anything else of the project's.
func TestImportsPointOneWay(t *testing.T) {
	const module = "github.com/raytpu/terraform-provider-raytpu/internal/"
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			return nil
		}
		seen[dir] = true
		allowed, known := allowedImports[dir]
		if !known {
			t.Errorf("%s: package %s is not in the import graph of the package doc", path, dir)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if rest, ours := strings.CutPrefix(imp, module); ours && !slices.Contains(allowed, rest) {
				t.Errorf("%s imports %s; the package doc lets %s import only %v", path, imp, dir, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range allowedImports {
		if !seen[dir] {
			t.Errorf("the import graph names %s, which has no Go files", dir)
		}
	}
}
