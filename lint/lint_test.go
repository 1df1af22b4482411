// Package lint keeps the shape of the house honest: which package may import
// which, that the SDK modules stand apart from the broker, and that no file
// grows past what a reader takes in at once. It has no code of its own; its
// tests read the source tree as text (go/parser, imports only), so they run
// in milliseconds and need no build.
//
// The layers, from the bottom up. A package may import the packages of lower
// layers. Within one layer it may import only packages matched by its own
// pattern (sdk/... may import sdk/auth; core/log may not import core/auth).
// A pattern ending in /... matches a folder and everything under it; every
// package of the tree must match exactly one pattern. The test reads this
// table from this comment, so the table here is the one that is enforced.
//
//	layer 0: sdk/...
//	layer 1: internal/testport core/record core/protocol core/config core/telemetry core/log/vfs core/share
//	layer 2: core/log core/log/vfs/errorfs core/controller core/auth
//	layer 3: core/partition core/extension
//	layer 4: core/replication core/group core/txn
//	layer 5: core/broker/... core/fetchsession core/share/coordinator
//	layer 6: core/httpapi/... mirror/...
//	layer 7: core/api
//	layer 8: core/server
//	layer 9: hooks/... plugins/...
//	layer 10: loader
//	layer 11: cmd/... examples/... bench/... interop/... tests/... lint
//
// What the layers say: protocol and log know no other core package but the
// record format (core/share, the share-partition state machine, knows
// nothing); a partition replica knows its log; the coordinators and the
// replication know partitions; core/broker owns the hosted replicas and the
// produce policy; the HTTP handlers (core/httpapi) and the Kafka handlers
// (core/api) ask the owners, and core/api hands the HTTP side its views of
// them, never the other way; the server wires. hooks and plugins implement the sdk contracts and sit above
// core, so core can never import them: the server's loader injects them.
//
// Beyond the layers: the sdk modules import nothing of the broker module and
// their go.mod files neither require nor replace it; and no source file other
// than generated code or test code is longer than maxLines lines.
package lint

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

const (
	module   = "github.com/gregorbroker/gregor"
	maxLines = 800
)

// layer is one row of the table: its rank and its patterns.
type layer struct {
	rank     int
	patterns []string
}

var layerLine = regexp.MustCompile(`^layer (\d+): (.+)$`)

// parseLayers reads the table from the package comment of this file.
func parseLayers(src []byte) ([]layer, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "lint_test.go", src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, fmt.Errorf("lint: %w", err)
	}
	if f.Doc == nil {
		return nil, fmt.Errorf("lint: no package comment")
	}
	var out []layer
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		m := layerLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		rank, _ := strconv.Atoi(m[1])
		out = append(out, layer{rank: rank, patterns: strings.Fields(m[2])})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lint: no layer lines in the package comment")
	}
	return out, nil
}

// matches reports whether the tree-relative package dir is matched by pat.
func matches(pat, dir string) bool {
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return dir == base || strings.HasPrefix(dir, base+"/")
	}
	return dir == pat
}

// place finds the layer and pattern of a package dir.
func place(layers []layer, dir string) (rank int, pat string, n int) {
	for _, l := range layers {
		for _, p := range l.patterns {
			if matches(p, dir) {
				rank, pat, n = l.rank, p, n+1
			}
		}
	}
	return rank, pat, n
}

// pkgImports maps each package dir of the tree to the imports of its
// non-test Go files (every build tag counted) that name the tree itself,
// as tree-relative dirs, with the file that imports each.
type pkgImports map[string]map[string]string

// skipDir reports the folders that hold no package of the tree: hidden and
// underscore folders, caches, testdata, node_modules.
func skipDir(name string) bool {
	return name != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		name == "testdata" || name == "node_modules")
}

// generated reports whether a Go file carries the standard generated-code header.
func generated(src []byte) bool {
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

func readImports(tree fs.FS) (pkgImports, error) {
	out := pkgImports{}
	fset := token.NewFileSet()
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := fs.ReadFile(tree, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("lint: %w", err)
		}
		dir := path.Dir(p)
		if out[dir] == nil {
			out[dir] = map[string]string{}
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
				out[dir][rel] = p
			} else if ip == module {
				out[dir]["."] = p
			}
		}
		return nil
	})
	return out, err
}

// checkLayers returns one line per import that breaks the table, and per
// package the table does not place exactly once.
func checkLayers(layers []layer, imps pkgImports) []string {
	var bad []string
	for dir, deps := range imps {
		rank, pat, n := place(layers, dir)
		if n != 1 {
			bad = append(bad, fmt.Sprintf("%s: matched by %d patterns of the layer table, want 1", dir, n))
			continue
		}
		for dep, file := range deps {
			drank, dpat, dn := place(layers, dep)
			switch {
			case dn != 1:
				bad = append(bad, fmt.Sprintf("%s imports %s, which the layer table does not place once", file, dep))
			case drank > rank:
				bad = append(bad, fmt.Sprintf("%s imports %s: layer %d imports layer %d above it", file, dep, rank, drank))
			case drank == rank && dpat != pat:
				bad = append(bad, fmt.Sprintf("%s imports %s: both on layer %d, and only %s may be imported from beside", file, dep, rank, pat))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// checkSDK returns one line per sdk file that imports the broker module
// and per sdk go.mod that requires or replaces it.
func checkSDK(tree fs.FS, imps pkgImports) []string {
	var bad []string
	for dir, deps := range imps {
		if !matches("sdk/...", dir) {
			continue
		}
		for dep, file := range deps {
			if !matches("sdk/...", dep) {
				bad = append(bad, fmt.Sprintf("%s imports %s/%s: the sdk imports nothing of the broker", file, module, dep))
			}
		}
	}
	_ = fs.WalkDir(tree, "sdk", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		src, _ := fs.ReadFile(tree, p)
		for i, line := range strings.Split(string(src), "\n") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require"))
			f = append(f, "", "")
			if f[0] == "replace" {
				f = f[1:]
			}
			// A requirement or a replacement of the broker module itself
			// (not of an sdk module) ties the sdk to the broker.
			if f[0] == module || strings.HasSuffix(line, "=> ../..") || strings.HasSuffix(line, "=> ../../") {
				bad = append(bad, fmt.Sprintf("%s:%d: %q: the sdk modules neither require nor replace the broker module", p, i+1, strings.TrimSpace(line)))
			}
		}
		return nil
	})
	sort.Strings(bad)
	return bad
}

// sourceExt are the files whose length is bounded.
var sourceExt = map[string]bool{".go": true, ".java": true, ".py": true, ".js": true, ".ts": true, ".sh": true, ".proto": true}

// checkLength returns one line per non-test, non-generated source file
// longer than maxLines.
func checkLength(tree fs.FS) []string {
	var bad []string
	_ = fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if skipDir(d.Name()) || d.Name() == "assets" || d.Name() == "dist" {
				return fs.SkipDir
			}
			return nil
		}
		ext := path.Ext(p)
		base := strings.TrimSuffix(path.Base(p), ext)
		if !sourceExt[ext] || strings.HasSuffix(base, "_test") || strings.HasSuffix(base, ".test") ||
			strings.HasSuffix(base, ".min") || strings.HasSuffix(base, ".pb") || strings.HasSuffix(base, "_grpc.pb") {
			return nil
		}
		src, err := fs.ReadFile(tree, p)
		if err != nil || (ext == ".go" && generated(src)) {
			return nil
		}
		if n := strings.Count(string(src), "\n"); n > maxLines {
			bad = append(bad, fmt.Sprintf("%s: %d lines, over %d: split it by responsibility", p, n, maxLines))
		}
		return nil
	})
	return bad
}

func repoTree(t *testing.T) fs.FS {
	t.Helper()
	mod, err := os.ReadFile("../go.mod")
	if err != nil || !strings.HasPrefix(string(mod), "module "+module+"\n") {
		t.Fatalf("lint: ../go.mod is not the %s module (err %v)", module, err)
	}
	return os.DirFS("..")
}

func ownLayers(t *testing.T) []layer {
	t.Helper()
	src, err := os.ReadFile("lint_test.go")
	if err != nil {
		t.Fatal(err)
	}
	layers, err := parseLayers(src)
	if err != nil {
		t.Fatal(err)
	}
	return layers
}

func report(t *testing.T, what string, bad []string) {
	t.Helper()
	if len(bad) > 0 {
		t.Errorf("%s: %d problem(s):\n\t%s", what, len(bad), strings.Join(bad, "\n\t"))
	}
}

func TestImportLayers(t *testing.T) {
	imps, err := readImports(repoTree(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(imps) < 20 {
		t.Fatalf("read %d packages: the walk missed the tree", len(imps))
	}
	report(t, "import layers", checkLayers(ownLayers(t), imps))
}

func TestSDKStandsApart(t *testing.T) {
	tree := repoTree(t)
	imps, err := readImports(tree)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "sdk", checkSDK(tree, imps))
}

func TestFileLength(t *testing.T) {
	report(t, "file length", checkLength(repoTree(t)))
}

// TestChecksCatchPlantedFaults plants each fault the checks guard against
// in a small tree and expects each to be reported: a check that cannot fail
// guards nothing.
func TestChecksCatchPlantedFaults(t *testing.T) {
	layers := ownLayers(t)
	goFile := func(pkg string, imports ...string) *fstest.MapFile {
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\nimport (\n", pkg)
		for _, im := range imports {
			fmt.Fprintf(&b, "\t_ %q\n", im)
		}
		b.WriteString(")\n")
		return &fstest.MapFile{Data: []byte(b.String())}
	}
	clean := fstest.MapFS{
		"core/log/log.go":           goFile("log", module+"/core/record", "fmt"),
		"core/record/record.go":     goFile("record"),
		"core/api/api.go":           goFile("api", module+"/core/log"),
		"core/api/api_test.go":      goFile("api", module+"/core/server"),
		"sdk/auth/auth.go":          goFile("auth"),
		"sdk/plugin/plugin.go":      goFile("plugin", module+"/sdk/auth"),
		"sdk/plugin/go.mod":         {Data: []byte("module " + module + "/sdk/plugin\n\nrequire " + module + "/sdk v0.0.0\n\nreplace " + module + "/sdk => ..\n")},
		"core/log/testdata/x.go":    goFile("x", module+"/core/server"),
		"core/log/gen.go":           {Data: []byte("// Code generated by protoc. DO NOT EDIT.\n\npackage log\n" + strings.Repeat("//\n", maxLines+1))},
		"core/log/long_test.go":     {Data: []byte("package log\n" + strings.Repeat("//\n", maxLines+1))},
		"core/record/exact.go":      {Data: []byte("package record\n" + strings.Repeat("//\n", maxLines-1))},
		"web/console/assets/app.js": {Data: []byte(strings.Repeat("x\n", maxLines+1))},
	}
	run := func(tree fstest.MapFS) []string {
		imps, err := readImports(tree)
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		all = append(all, checkLayers(layers, imps)...)
		all = append(all, checkSDK(tree, imps)...)
		all = append(all, checkLength(tree)...)
		return all
	}
	if bad := run(clean); len(bad) > 0 {
		t.Fatalf("clean tree reported:\n\t%s", strings.Join(bad, "\n\t"))
	}
	for _, tc := range []struct {
		name, file string
		f          *fstest.MapFile
		want       string
	}{
		{"upward import", "core/log/bad.go", goFile("log", module+"/core/api"), "layer 2 imports layer 7 above it"},
		{"beside import", "core/log/bad.go", goFile("log", module+"/core/controller"), "both on layer 2"},
		{"core imports hooks", "core/api/bad.go", goFile("api", module+"/hooks"), "layer 7 imports layer 9 above it"},
		{"unplaced package", "core/nowhere/x.go", goFile("nowhere"), "matched by 0 patterns"},
		{"unplaced import", "core/api/bad.go", goFile("api", module+"/core/nowhere"), "does not place once"},
		{"sdk imports broker", "sdk/auth/bad.go", goFile("auth", module+"/hooks"), "the sdk imports nothing of the broker"},
		{"sdk requires broker", "sdk/clients/go.mod", &fstest.MapFile{Data: []byte("module " + module + "/sdk/clients\n\nrequire (\n\t" + module + " v0.0.0\n)\n")}, "neither require nor replace"},
		{"sdk replaces broker", "sdk/clients/go.mod", &fstest.MapFile{Data: []byte("module " + module + "/sdk/clients\n\nreplace " + module + " => ../..\n")}, "neither require nor replace"},
		{"long file", "core/record/long.go", &fstest.MapFile{Data: []byte("package record\n" + strings.Repeat("//\n", maxLines))}, "lines, over 800"},
		{"long script", "scripts/long.sh", &fstest.MapFile{Data: []byte(strings.Repeat("#\n", maxLines+1))}, "lines, over 800"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := fstest.MapFS{}
			for k, v := range clean {
				tree[k] = v
			}
			tree[tc.file] = tc.f
			bad := run(tree)
			if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), tc.want) {
				t.Fatalf("planted %s in %s: got %q, want a line with %q", tc.name, tc.file, bad, tc.want)
			}
		})
	}
}
