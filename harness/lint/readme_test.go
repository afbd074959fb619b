package lint

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the README's rule table from the rule table")

// The README's rule table sits between these lines.
const (
	readmePath  = "../../README.md"
	readmeBegin = "<!-- lint-rules: generated from the rule table in harness/lint; go test ./harness/lint -run TestREADMERuleTable -update rewrites it -->\n"
	readmeEnd   = "<!-- end lint-rules -->\n"
)

// ruleTableMarkdown renders the rule table as the README shows it.
func ruleTableMarkdown() string {
	cell := func(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }
	var b strings.Builder
	b.WriteString("| id | severity | reads | what it flags | why |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range Rules() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, r.Severity, r.Target, cell(r.Flags), cell(r.Why))
	}
	return b.String()
}

// TestREADMERuleTable ties the README's table to the rule table: the README
// is derived from it, never edited by hand.
func TestREADMERuleTable(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	text := string(data)
	before, rest, ok := strings.Cut(text, readmeBegin)
	require.True(t, ok, "README.md has no %q line", strings.TrimSpace(readmeBegin))
	_, after, ok := strings.Cut(rest, readmeEnd)
	require.True(t, ok, "README.md has no %q line", strings.TrimSpace(readmeEnd))
	want := before + readmeBegin + ruleTableMarkdown() + readmeEnd + after
	if *update {
		require.NoError(t, os.WriteFile(readmePath, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, text, "the README's lint rule table differs from the rule table; run go test ./harness/lint -run TestREADMERuleTable -update")
}
