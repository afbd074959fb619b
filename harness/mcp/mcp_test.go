package mcp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/harnesstest"
	mcpt "github.com/onceproof/onceproof/harness/mcp"
)

func TestAnMCPCallEndsWhenItsContextIsCancelled(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hang", Version: "1"}, nil)
	called := make(chan struct{}, 8)
	release := make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			called <- struct{}{}
			select { // never answers while the client waits
			case <-ctx.Done():
			case <-release:
			}
			return nil, context.Canceled
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	tool, err := mcpt.NewMCPTool(mcpt.MCPConfig{Name: "hang", URL: hs.URL, Tool: "hang", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k",
		Timeout: time.Hour, Oracle: harnesstest.ZeroOracle()})
	require.NoError(t, err)
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := harness.Open(context.Background(), backend, tool, harness.KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())
	defer close(release) // before the session closes: closing waits for the handler
	require.NoError(t, s.Ready(context.Background()))
	call, err := tool.Prepare(s.NewOp(1))
	require.NoError(t, err)

	ctx, cancelledAt := harnesstest.CancelSoon(t, called)
	a := s.Send(ctx, call, time.Now(), harness.GiveUp{})
	assert.Less(t, time.Since(cancelledAt()), harnesstest.Promptly, "a 1h MCP call timeout must not outlast the context")
	assert.Equal(t, harness.Unknown, a.Outcome)
	assert.Contains(t, a.Error, "abandoned")
}

func TestMCPReadyEndsWhenItsContextIsCancelled(t *testing.T) {
	silent := harnesstest.NewSilentListener(t)
	tool, err := mcpt.NewMCPTool(mcpt.MCPConfig{Name: "m", URL: "http://" + silent.Addr().String() + "/mcp", Tool: "x",
		Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k", Timeout: time.Hour, Oracle: harnesstest.ZeroOracle()})
	require.NoError(t, err)
	defer tool.Close()
	ctx, cancelledAt := harnesstest.CancelSoon(t, silent.Accepted)
	err = tool.Ready(ctx, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", silent.Addr().String())
	})
	require.Error(t, err)
	assert.Less(t, time.Since(cancelledAt()), harnesstest.Promptly)
}

func TestAReadOnlyMCPToolNeedsNoKey(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hints", Version: "1"}, nil)
	answer := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "stats", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, answer)
	srv.AddTool(&mcp.Tool{Name: "create", InputSchema: map[string]any{"type": "object"}}, answer)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	dial := func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", hs.Listener.Addr().String())
	}
	for _, tc := range []struct {
		tool, keyArg string
		refused      bool
		reason       string
	}{
		{"stats", "", false, "a tool claiming readOnlyHint needs no key location"},
		{"create", "", true, "a write tool without a key location is refused, naming the field"},
		{"create", "idempotency_key", false, "a write tool with a key location"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			tool, err := mcpt.NewMCPTool(mcpt.MCPConfig{Name: tc.tool, URL: hs.URL, Tool: tc.tool, Arguments: `{"q":"{{.Marker}}"}`, KeyArgument: tc.keyArg, Oracle: harnesstest.ZeroOracle()})
			require.NoError(t, err, "whether a key is needed is known only once the server lists the tool")
			defer tool.Close()
			err = tool.Ready(context.Background(), dial)
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, mcpt.ErrNoKey)
			var fe *harness.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "mcp", fe.Field)
			require.ErrorIs(t, tool.Ready(context.Background(), dial), mcpt.ErrNoKey, "still refused on the next call")
		})
	}
}
