package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// `make test` runs only the tests of OLDEST_TERRAFORM_TESTS under the oldest Terraform (see the
// GNUmakefile): a test renamed away from the list would silently stop running there. Every name
// the list spells out must be a test of this package, and every prefix it ends with .* must
// begin at least one.
func TestOldestTerraformTestsNameTests(t *testing.T) {
	pattern := oldestTerraformTests(t)
	tests := testFunctions(t)
	re := regexp.MustCompile(pattern)
	matched := 0
	for name := range tests {
		if re.MatchString(name) {
			matched++
		}
	}
	if matched < 20 {
		t.Errorf("OLDEST_TERRAFORM_TESTS matches %d tests, want the 20 or more it lists", matched)
	}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range spelledOut(parsed.Simplify()) {
		prefix, open := strings.CutSuffix(name, "*")
		found := false
		for test := range tests {
			if test == name || (open && strings.HasPrefix(test, prefix)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("OLDEST_TERRAFORM_TESTS names %s, which is no test of internal/provider", name)
		}
	}
}

// oldestTerraformTests is the GNUmakefile's OLDEST_TERRAFORM_TESTS as a Go regexp (make writes $
// as $$).
func oldestTerraformTests(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "GNUmakefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "OLDEST_TERRAFORM_TESTS :="); ok {
			return strings.ReplaceAll(strings.TrimSpace(v), "$$", "$")
		}
	}
	t.Fatal("no OLDEST_TERRAFORM_TESTS in the GNUmakefile")
	return ""
}

// testFunctions are the names of the package's Test functions.
func testFunctions(t *testing.T) map[string]bool {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				names[fn.Name.Name] = true
			}
		}
	}
	return names
}

// spelledOut expands a pattern of literals, groups, alternations and trailing .* into the names
// it spells, a trailing .* kept as *.
func spelledOut(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}
	case syntax.OpCapture:
		return spelledOut(re.Sub[0])
	case syntax.OpStar:
		return []string{"*"}
	case syntax.OpQuest:
		return append([]string{""}, spelledOut(re.Sub[0])...)
	case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpEmptyMatch:
		return []string{""}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			out = append(out, spelledOut(sub)...)
		}
		return out
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			var next []string
			for _, head := range out {
				for _, tail := range spelledOut(sub) {
					next = append(next, head+tail)
				}
			}
			out = next
		}
		return out
	case syntax.OpCharClass:
		// Alternations of names that differ in one letter simplify to a class: one name per rune.
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		return out
	}
	return []string{"?" + re.String()}
}
