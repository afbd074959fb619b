package scenarios_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/scenarios"
)

// TestDocsListEveryScenario ties the README's scenario table (its rows, in
// table order) and the package comment to the scenario table: adding a
// scenario without documenting it fails here.
func TestDocsListEveryScenario(t *testing.T) {
	var want []string
	for _, id := range scenarios.All() {
		want = append(want, string(id))
	}

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	section := string(readme)
	start := strings.Index(section, "\n## Scenarios\n")
	require.GreaterOrEqual(t, start, 0, "README has a Scenarios section")
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
	}
	// The section's first table is the scenarios'; later tables (profiles)
	// do not start with a backquoted id.
	require.GreaterOrEqual(t, len(rows), len(want), "README scenario table rows: %v", rows)
	assert.Equal(t, want, rows[:len(want)], "README's scenario table lists every scenario in table order")

	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for _, id := range want {
		assert.Contains(t, string(doc), "//   - "+id+":", "scenarios/doc.go describes %s", id)
	}
}
