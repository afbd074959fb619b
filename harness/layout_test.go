package harness_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/onceproof/onceproof/"

// layout is which of onceproof's packages each package may import (its
// non-test imports), as the packages' doc.go files say: the dependencies
// flow one way, cmd → scenarios → harness's packages → harness → faults.
var layout = map[string][]string{
	"faults":                    nil,
	"harness/jsonptr":           nil,
	"harness/capture":           nil,
	"harness/report":            {"harness/jsonptr"},
	"harness/report/html":       {"harness/report"},
	"harness/report/sarif":      {"harness/report"},
	"harness/report/github":     {"harness/report"},
	"harness":                   {"faults", "harness/capture", "harness/jsonptr", "harness/report"},
	"harness/baseline":          {"harness/report"},
	"harness/lint":              {"harness/report"},
	"harness/transport":         {"harness", "harness/report"},
	"harness/mcp":               {"harness", "harness/transport"},
	"harness/stdio":             {"harness", "harness/mcp", "harness/report", "harness/repro", "harness/transport"},
	"harness/storeoracle":       {"harness", "harness/report"},
	"harness/container":         {"faults", "harness"},
	"harness/repro":             {"harness/report"},
	"harness/spec":              {"harness", "harness/container", "harness/lint", "harness/mcp", "harness/report", "harness/stdio", "harness/storeoracle", "harness/transport"},
	"harness/openapi":           {"harness", "harness/spec"},
	"scenarios":                 {"faults", "harness", "harness/capture", "harness/report"},
	"harness/harnesstest":       {"harness"},
	"harness/report/reporttest": {"harness/lint", "harness/report", "harness/spec"},
	"faults/faultstest":         nil,
}

// goList runs go list over the module's packages with format.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err, "go list %v", args)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestPackagesImportWhatTheirDocsSay checks every listed package's
// onceproof imports against the layout, and that every package under
// harness, scenarios and faults is listed.
func TestPackagesImportWhatTheirDocsSay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./harness/...", "./scenarios/...", "./faults/...") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		allowed, ok := layout[pkg]
		if !assert.True(t, ok, "package %s is not in the layout table: add it (and its doc.go says what it may import)", pkg) {
			continue
		}
		for _, imp := range fields[1:] {
			if own, ok := strings.CutPrefix(imp, module); ok {
				assert.True(t, slices.Contains(allowed, own), "%s imports %s, which its layout does not allow", pkg, own)
			}
		}
	}
}

// TestTheCoreNeedsOnlyGo: a user who only builds tools in a go test
// compiles no Docker client, container library, MCP SDK, database driver,
// browser driver, telemetry or YAML parser.
func TestTheCoreNeedsOnlyGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	banned := []string{"docker", "moby", "testcontainers", "modelcontextprotocol", "jackc/pgx", "go-redis", "chromedp", "opentelemetry", "yaml"}
	for _, dep := range goList(t, "-deps", "./harness") {
		for _, b := range banned {
			assert.NotContains(t, dep, b, "package harness depends on %s", dep)
		}
	}
}
