package harness

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
)

// promptly is how soon a cancelled wait must end, whatever the timeouts.
const promptly = time.Second

// silentListener accepts connections and never answers on them; Close
// closes them all.
type silentListener struct {
	net.Listener
	mu       sync.Mutex
	conns    []net.Conn
	accepted chan struct{}
	done     sync.WaitGroup
}

func newSilentListener(t *testing.T) *silentListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &silentListener{Listener: ln, accepted: make(chan struct{}, 64)}
	s.done.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.accepted <- struct{}{}
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.done.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	return s
}

// cancelAfter returns a context cancelled once fn signals (or after d) and
// the time it was cancelled at.
func cancelSoon(t *testing.T, wait <-chan struct{}) (context.Context, func() time.Time) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var at time.Time
	var mu sync.Mutex
	go func() {
		select {
		case <-wait:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		at = time.Now()
		mu.Unlock()
		cancel()
	}()
	return ctx, func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
}

func zeroOracle() Oracle {
	return OracleFunc(func(context.Context, string) (int, error) { return 0, nil })
}

func TestAnAttemptEndsWhenItsContextIsCancelled(t *testing.T) {
	silent := newSilentListener(t)
	tool, err := NewHTTPTool(HTTPConfig{Name: "silent", URL: "http://" + silent.Addr().String() + "/x", Body: "{{.Marker}}",
		Timeout: time.Hour, Oracle: zeroOracle()})
	require.NoError(t, err)
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := Open(context.Background(), backend, tool, KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())
	call, err := tool.Prepare(s.NewOp(1))
	require.NoError(t, err)

	ctx, cancelledAt := cancelSoon(t, silent.accepted)
	a := s.Send(ctx, call, time.Now(), GiveUp{})
	took := time.Since(cancelledAt())
	assert.Less(t, took, promptly, "a 1h per-attempt timeout must not outlast the context")
	assert.Equal(t, Unknown, a.Outcome, "the request was written: its fate is unknown")
	assert.Contains(t, a.Error, "abandoned")
}

func TestHTTPToolSendEndsWhenItsContextIsCancelled(t *testing.T) {
	tool, err := NewHTTPTool(HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: "{{.Marker}}", Oracle: zeroOracle()})
	require.NoError(t, err)
	call, err := tool.Prepare(Operation{ID: "o", Key: "k", Marker: "m"})
	require.NoError(t, err)
	client, server := net.Pipe()
	defer server.Close()
	go func() { _, _ = server.Read(make([]byte, len(call.Wire))) }() // read the request, never answer
	ready := make(chan struct{})
	close(ready)
	ctx, cancelledAt := cancelSoon(t, ready)
	r := tool.Send(ctx, client, call, time.Now().Add(time.Hour))
	assert.Less(t, time.Since(cancelledAt()), promptly)
	assert.Equal(t, Unknown, r.Outcome)
	assert.Error(t, r.Err)
}

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
	tool, err := NewMCPTool(MCPConfig{Name: "hang", URL: hs.URL, Tool: "hang", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k",
		Timeout: time.Hour, Oracle: zeroOracle()})
	require.NoError(t, err)
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := Open(context.Background(), backend, tool, KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())
	defer close(release) // before the session closes: closing waits for the handler
	require.NoError(t, s.Ready(context.Background()))
	call, err := tool.Prepare(s.NewOp(1))
	require.NoError(t, err)

	ctx, cancelledAt := cancelSoon(t, called)
	a := s.Send(ctx, call, time.Now(), GiveUp{})
	assert.Less(t, time.Since(cancelledAt()), promptly, "a 1h MCP call timeout must not outlast the context")
	assert.Equal(t, Unknown, a.Outcome)
	assert.Contains(t, a.Error, "abandoned")
}

func TestMCPReadyEndsWhenItsContextIsCancelled(t *testing.T) {
	silent := newSilentListener(t)
	tool, err := NewMCPTool(MCPConfig{Name: "m", URL: "http://" + silent.Addr().String() + "/mcp", Tool: "x",
		Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k", Timeout: time.Hour, Oracle: zeroOracle()})
	require.NoError(t, err)
	defer tool.Close()
	ctx, cancelledAt := cancelSoon(t, silent.accepted)
	err = tool.Ready(ctx, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", silent.Addr().String())
	})
	require.Error(t, err)
	assert.Less(t, time.Since(cancelledAt()), promptly)
}

func TestOraclesEndWhenTheirContextIsCancelled(t *testing.T) {
	silent := newSilentListener(t)
	addr := silent.Addr().String()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		silent.accepted <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	httpOracle, err := NewHTTPOracle(hang.URL+"/count/{{.Marker}}", "/n")
	require.NoError(t, err)
	httpOracle.Timeout = MaxOracleTimeout
	moving := 0
	for _, tc := range []struct {
		reason string
		oracle Oracle
		// started, when set, is signalled by the oracle's own work; else
		// the oracle is cancelled after a short while.
		started <-chan struct{}
	}{
		{"an HTTP oracle that never answers", httpOracle, silent.accepted},
		{"a command oracle whose shell child keeps its output open", &CommandOracle{Argv: []string{"sh", "-c", "sleep 30; echo 1"}, Timeout: MaxOracleTimeout}, nil},
		{"a settle wait", Settled(OracleFunc(func(context.Context, string) (int, error) { moving++; return moving, nil }), MaxSettle), nil},
		{"a SQL oracle whose server never answers", &SQLOracle{DSN: "postgres://u:p@" + addr + "/db?sslmode=disable", Query: "select $1::int", Timeout: MaxOracleTimeout}, silent.accepted},
		{"a Redis oracle whose server never answers", &RedisOracle{URL: "redis://" + addr + "/0", Command: []*Template{MustTemplate("SCARD"), MustTemplate("{{.Marker}}")}, Timeout: MaxOracleTimeout}, silent.accepted},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			started := tc.started
			if started == nil {
				c := make(chan struct{})
				time.AfterFunc(200*time.Millisecond, func() { close(c) })
				started = c
			}
			ctx, cancelledAt := cancelSoon(t, started)
			_, err := tc.oracle.Count(ctx, "m")
			took := time.Since(cancelledAt())
			closeOracle(tc.oracle)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrOracle)
			assert.Less(t, took, promptly)
		})
	}
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
			tool, err := NewMCPTool(MCPConfig{Name: tc.tool, URL: hs.URL, Tool: tc.tool, Arguments: `{"q":"{{.Marker}}"}`, KeyArgument: tc.keyArg, Oracle: zeroOracle()})
			require.NoError(t, err, "whether a key is needed is known only once the server lists the tool")
			defer tool.Close()
			err = tool.Ready(context.Background(), dial)
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNoKey)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "mcp", fe.Field)
			require.ErrorIs(t, tool.Ready(context.Background(), dial), ErrNoKey, "still refused on the next call")
		})
	}
}
