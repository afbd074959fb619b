package lint_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/lint"
)

// TestFixtureServerFindings lints the MCP fixture server with its planted
// tools as a client sees it: each planted tool draws exactly its documented
// rules, the clean tools (create_ticket and the two whose lies are in
// behaviour) draw nothing.
func TestFixtureServerFindings(t *testing.T) {
	srv, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{Lint: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "lint-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.Endpoint(), MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}, nil)
	require.NoError(t, err)
	defer cs.Close()

	seen := map[string]bool{}
	fired := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		seen[tool.Name] = true
		want := fixtures.MCPLintExpected(tool.Name)
		require.NotNil(t, want, "%s is documented", tool.Name)
		res := lint.MCP(tool, lint.MCPOptions{})
		got := []string{}
		for _, f := range res.Findings {
			got = append(got, f.Rule)
			fired[f.Rule] = true
		}
		slices.Sort(got)
		slices.Sort(want)
		assert.Equal(t, want, slices.Compact(got), "%s: %v", tool.Name, res.Findings)
		assert.Len(t, got, len(want), "%s: one finding per planted problem: %v", tool.Name, res.Findings)
	}
	for _, name := range append(fixtures.MCPTools(), fixtures.MCPLintTools()...) {
		assert.True(t, seen[name], "the server lists %s", name)
	}
	for _, r := range lint.Rules() {
		if r.Target == lint.TargetMCP {
			assert.True(t, fired[r.ID], "the fixture server plants a problem for every MCP rule: %s has none", r.ID)
		}
	}
}
