package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// mcpArguments are the fixture tools' argument templates and where their
// key travels.
var mcpArguments = map[string]struct{ args, keyArg, keyMeta string }{
	"create_ticket": {`{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`, "idempotency_key", ""},
	"send_notice":   {`{"to":"ops","text":"notice {{.Marker}}"}`, "idempotency_key", ""},
	"ticket_stats":  {`{"query":"{{.Marker}}"}`, "", "io.onceproof/idempotency-key"},
}

func mcpTool(t *testing.T, srv *fixtures.MCPServer, name string) *mcp.MCPTool {
	t.Helper()
	oracle, err := harness.NewHTTPOracle(srv.URL()+"/count?marker={{.Marker}}", "/count")
	require.NoError(t, err)
	a := mcpArguments[name]
	tool, err := mcp.NewMCPTool(mcp.MCPConfig{Name: name, URL: srv.Endpoint(), Tool: name, Arguments: a.args,
		KeyArgument: a.keyArg, KeyMeta: a.keyMeta, Timeout: fastTimeout, ResultID: "/id", Oracle: oracle})
	require.NoError(t, err)
	return tool
}

// TestMCPFixtureVerdicts certifies the MCP fixture tools in both response
// modes (SSE streams and plain JSON) and asserts their documented verdicts,
// the annotation check included.
func TestMCPFixtureVerdicts(t *testing.T) {
	setRapid(t, 10, 0)
	for _, mode := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		t.Run(mode.name, func(t *testing.T) {
			srv, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{JSONResponse: mode.json})
			require.NoError(t, err)
			defer srv.Close()
			for _, name := range fixtures.MCPTools() {
				t.Run(name, func(t *testing.T) {
					want := fixtures.MCPExpected(name)
					rep, err := scenarios.Run(context.Background(), mcpTool(t, srv, name), fast)
					require.NoError(t, err)
					got := verdictsOf(t, rep)
					require.Equal(t, want, got, "%s: documented verdicts", name)
				})
			}
		})
	}
}

// TestMCPRetriesSayWhichSession: a retry after a lost tools/call response
// goes out on a new connection, in the same session when it survived; the
// attempt log says which.
func TestMCPRetriesSayWhichSession(t *testing.T) {
	setRapid(t, 5, 11)
	srv, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{})
	require.NoError(t, err)
	defer srv.Close()
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.LostResponse}
	rep, err := scenarios.Run(context.Background(), mcpTool(t, srv, "send_notice"), cfg)
	require.NoError(t, err)
	s := rep.Scenarios[0]
	require.Equal(t, report.Fail, s.Verdict)
	notes := []string{}
	for _, a := range s.Counterexample.Attempts {
		require.True(t, strings.HasPrefix(a.Note, "session "), "attempt %d has no session note: %+v", a.N, a)
		notes = append(notes, a.Note)
	}
	require.Len(t, notes, 2)
	t.Logf("sessions: %v", notes)
}

// TestMCPNoPassWithoutResponse: an MCP tool whose server is gone fails its
// preflight, it is never certified.
func TestMCPUnreachable(t *testing.T) {
	srv, err := fixtures.StartMCP("127.0.0.1:0", fixtures.MCPOptions{})
	require.NoError(t, err)
	tool := mcpTool(t, srv, "create_ticket")
	require.NoError(t, srv.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = scenarios.Run(ctx, tool, fast)
	require.ErrorIs(t, err, harness.ErrPreflight)
}
