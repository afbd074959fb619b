package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/spec"
)

// TestDiscoverWritesASpecCertifyAccepts runs discover against the MCP
// fixture server, then certifies the spec it wrote.
func TestDiscoverWritesASpecCertifyAccepts(t *testing.T) {
	srv, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{})
	require.NoError(t, err)
	defer srv.Close()
	sp := filepath.Join(t.TempDir(), "mcp.yaml")
	// Without --oracle-url the oracles are the placeholder certify refuses,
	// as discover --openapi writes them.
	code, out, errOut := runCLI(t, "discover", "--mcp", srv.Endpoint(), "--out", sp)
	require.Equal(t, exitOK, code, errOut)
	for _, want := range []string{"create_ticket", "send_notice", "ticket_stats", "read-only (claimed)"} {
		require.Contains(t, out, want)
	}
	require.Contains(t, errOut, "replace each oracle: FILL-IN")
	code, _, errOut = runCLI(t, "certify", "--spec", sp)
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "oracle: FILL-IN is the placeholder")

	// The fixture's oracle is the server's /count.
	code, _, errOut = runCLI(t, "discover", "--mcp", srv.Endpoint(), "--out", sp, "--oracle-url", strings.TrimSuffix(srv.Endpoint(), "/mcp")+"/count?marker={{.Marker}}")
	require.Equal(t, exitOK, code, errOut)
	s, err := spec.Load(sp)
	require.NoError(t, err, "the starter spec loads")
	require.Len(t, s.Tools, 3)
	for _, ts := range s.Tools {
		_, ok := ts.MCPServer()
		require.True(t, ok, ts.Name)
	}
	data, _ := os.ReadFile(sp)
	require.Contains(t, string(data), "key_argument: idempotency_key")
	require.True(t, strings.HasPrefix(string(data), "# yaml-language-server: $schema=https://"), "the first line gives editors the spec's schema")
	// Keep the lost-response trials short (the starter spec keeps the 2s
	// default), yet long enough for the preflight call on a loaded machine.
	require.NoError(t, os.WriteFile(sp, []byte(strings.ReplaceAll(string(data), "      tool: ", "      timeout: 1s\n      tool: ")), 0o644))

	// certify runs every tool and finds the lying ones.
	code, out, errOut = runCLI(t, "certify", "--spec", sp, "--checks", "3", "--max-backoff", "10ms", "--quiet")
	require.Equal(t, exitFailed, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "create-ticket: agent-ready")
	require.Contains(t, out, "send-notice: NOT agent-ready")
	require.Contains(t, out, "ticket-stats: NOT agent-ready")

	code, _, errOut = runCLI(t, "discover", "--mcp", "not a url")
	require.Equal(t, exitUsage, code, errOut)
}
