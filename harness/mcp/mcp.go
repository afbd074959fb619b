package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
)

// MCPConfig describes a write tool served by an MCP server over Streamable
// HTTP.
type MCPConfig struct {
	Name string
	// URL is the server's MCP endpoint; the proxy fronts its host:port.
	URL string
	// Tool is the MCP tool's name.
	Tool string
	// Arguments is a template rendering the tool's arguments as a JSON
	// object.
	Arguments string
	// KeyArgument, when set, is the argument the harness puts the key in;
	// KeyMeta, when set, the _meta field. With neither, Arguments must use
	// {{.Key}} itself, unless the tool claims readOnlyHint (Ready checks it
	// once the server has listed the tool).
	KeyArgument string
	KeyMeta     string
	KeyFormat   harness.KeyFormat
	// Timeout is the caller's deadline for one call (default 2s).
	Timeout time.Duration
	// ResultID is a JSON pointer into the result's structured content
	// naming the result ("" for none).
	ResultID string
	// Contract is the idempotency contract the tool promises (the zero
	// value is the IETF profile). An MCP result has no headers: its replay
	// headers are none, and a replayed header is refused.
	Contract harness.Contract
	Oracle   harness.Oracle
	// Guard checks the server's address (nil: loopback only, see [Guard]);
	// the fault proxy is given the literal address it resolves to.
	Guard *harness.Guard
	// Headers are sent with every HTTP request of the session (an
	// Authorization header); values are templates, rendered for the
	// operation of a tools/call and for an empty one otherwise (a header
	// that renders empty is left out).
	Headers map[string]string
}

// MCPTool is a write tool reached with an MCP tools/call. Every call goes
// out on its own connection, which the harness dials: a retry goes out on a
// new connection in the same MCP session when the session survives, in a
// new session otherwise, and the attempt log says which.
type MCPTool struct {
	c        MCPConfig
	url      *url.URL
	upstream string
	caller   *Caller
	headers  map[string]*harness.Template
	resultID *harness.Pointer

	conns chan net.Conn // connections handed from Send to the HTTP client

	mu      sync.Mutex
	session *mcp.ClientSession
	dialer  *sessionDialer // the session's own connections
	sid     int
	fresh   bool // the session was opened for the next call
	suspect bool // the last call failed: check the session before reuse
	tool    *mcp.Tool
}

// NewMCPTool validates c and returns the tool (no connection is made yet).
func NewMCPTool(c MCPConfig) (*MCPTool, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("mcp tool: %w", &harness.FieldError{Field: "name", Err: errors.New("name is empty")})
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, harness.ConfigError(c.Name, "mcp.url", fmt.Errorf("url %q: want http://host:port/mcp", c.URL))
	}
	upstream, err := c.Guard.Resolve(harness.HostPort(u))
	if err != nil {
		return nil, harness.ConfigError(c.Name, "mcp.url", fmt.Errorf("url %q: %w", c.URL, err))
	}
	if c.Tool == "" {
		return nil, harness.ConfigError(c.Name, "mcp.tool", errors.New("no MCP tool name"))
	}
	if c.Oracle == nil {
		return nil, harness.ConfigError(c.Name, "oracle", errors.New("no oracle: the harness cannot count effects without one"))
	}
	if c.KeyFormat == "" {
		c.KeyFormat = harness.KeyUUID
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	if len(c.Contract.ReplayHeaders) > 0 || c.Contract.ReplayedHeader != "" {
		return nil, harness.ConfigError(c.Name, "contract", fmt.Errorf("%w: an MCP result has no headers (replay_headers, replayed_header)", harness.ErrContract))
	}
	c.Contract.ReplayHeaders = []string{}
	if c.Contract, err = c.Contract.Resolve(); err != nil {
		return nil, harness.ConfigError(c.Name, "contract", err)
	}
	t := &MCPTool{c: c, url: u, upstream: upstream, conns: make(chan net.Conn, 64)}
	if t.caller, err = NewCaller(c.Name, CallConfig{Tool: c.Tool, Arguments: c.Arguments, KeyArgument: c.KeyArgument, KeyMeta: c.KeyMeta}); err != nil {
		return nil, err
	}
	t.headers = map[string]*harness.Template{}
	for k, v := range c.Headers {
		if t.headers[k], err = harness.ParseTemplate("header "+k, v); err != nil {
			return nil, harness.ConfigError(c.Name, "mcp.headers."+k, err)
		}
	}
	if t.resultID, err = harness.ParseResultID(c.Name, c.ResultID); err != nil {
		return nil, err
	}
	if err := harness.CheckMarker(t, "mcp.arguments", "arguments"); err != nil {
		return nil, err
	}
	return t, nil
}

// Fork implements Forker: a copy with its own MCP session and connections,
// for a Session whose trials overlap with this one's.
func (t *MCPTool) Fork() harness.Tool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &MCPTool{c: t.c, url: t.url, upstream: t.upstream, caller: t.caller, headers: t.headers, resultID: t.resultID, conns: make(chan net.Conn, 64), tool: t.tool}
}

// Name implements Tool.
func (t *MCPTool) Name() string { return t.c.Name }

// Upstream implements Tool.
func (t *MCPTool) Upstream() string { return t.upstream }

// Timeout implements Tool.
func (t *MCPTool) Timeout() time.Duration { return t.c.Timeout }

// Contract returns the idempotency contract the tool promises, defaults
// resolved.
func (t *MCPTool) Contract() harness.Contract { return t.c.Contract }

// Oracle implements Tool.
func (t *MCPTool) Oracle() harness.Oracle { return t.c.Oracle }

// KeyFormat is how the tool spells idempotency keys.
func (t *MCPTool) KeyFormat() harness.KeyFormat { return t.c.KeyFormat }

// ResultIDPointer is the tool's result_id JSON pointer ("" for none).
func (t *MCPTool) ResultIDPointer() string { return t.c.ResultID }

// Prepare implements Tool: Wire is the tools/call parameters as JSON.
func (t *MCPTool) Prepare(op harness.Operation) (*harness.Call, error) {
	wire, err := t.caller.Params(op)
	if err != nil {
		return nil, err
	}
	return &harness.Call{Op: op, Wire: wire, Summary: "tools/call " + t.c.Tool}, nil
}

// Ready implements Readier: it makes sure a live MCP session exists,
// opening one (through the proxy, before any fault is armed) when there is
// none or the last call left it dead.
func (t *MCPTool) Ready(ctx context.Context, dial func(context.Context) (net.Conn, error)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session != nil && t.suspect {
		pctx, cancel := context.WithTimeout(ctx, t.c.Timeout)
		err := t.session.Ping(pctx, nil)
		cancel()
		if err != nil {
			_ = closeSession(t.session, t.dialer)
			t.session, t.dialer = nil, nil
		}
		t.suspect = false
	}
	if t.session != nil {
		return t.checkKeyTravels()
	}
	sd := &sessionDialer{dial: dial, open: map[*trackedConn]struct{}{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "onceproof", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:             t.c.URL,
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: withHeaders(t.headers, &http.Transport{
			DisableKeepAlives: true, // one request, one connection: nothing is re-sent behind the harness's back
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				select {
				case c := <-t.conns: // the connection Send handed over for a tools/call
					return c, nil
				default:
					return sd.DialContext(ctx)
				}
			},
		})},
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// A cancelled ctx abandons the session at once: the SDK would otherwise
	// wait for its own best-effort requests (a cancellation notice, a
	// DELETE) to a server that does not answer.
	stop := context.AfterFunc(cctx, sd.abandon)
	defer stop()
	s, err := client.Connect(cctx, transport, nil)
	if err != nil {
		sd.abandon()
		return fmt.Errorf("%w: mcp %s: open session: %w", harness.ErrUnreachable, t.c.URL, err)
	}
	if t.tool == nil {
		if t.tool, err = findTool(cctx, s, t.c.Tool); err != nil {
			sd.abandon()
			_ = s.Close()
			return err
		}
	}
	if !stop() {
		_ = s.Close()
		return fmt.Errorf("mcp %s: open session: %w", t.c.URL, context.Cause(cctx))
	}
	t.session, t.dialer, t.fresh = s, sd, true
	t.sid++
	return t.checkKeyTravels()
}

// checkKeyTravels refuses a write tool whose key travels nowhere (see
// [Caller.CheckKey]).
func (t *MCPTool) checkKeyTravels() error { return t.caller.CheckKey(t.tool) }

// closeGrace is how long closing an MCP session may wait for the server
// before its connections are cut.
const closeGrace = 500 * time.Millisecond

// closeSession closes s, cutting its connections (d's) if the server has
// not let it go within closeGrace.
func closeSession(s *mcp.ClientSession, d *sessionDialer) error {
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	timer := time.NewTimer(closeGrace)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		if d != nil {
			d.abandon()
		}
		return <-done
	}
}

// errSessionAbandoned is the error of a connection an abandoned MCP session
// asks for.
var errSessionAbandoned = errors.New("mcp session abandoned")

// sessionDialer dials the connections of one MCP session's own requests
// (initialize, tools/list, pings, notices, the closing DELETE) through the
// proxy, and can cut them all at once.
type sessionDialer struct {
	dial func(context.Context) (net.Conn, error)

	mu   sync.Mutex
	dead bool
	open map[*trackedConn]struct{}
}

// DialContext dials a connection the session may be made to let go of.
func (d *sessionDialer) DialContext(ctx context.Context) (net.Conn, error) {
	d.mu.Lock()
	dead := d.dead
	d.mu.Unlock()
	if dead {
		return nil, errSessionAbandoned
	}
	c, err := d.dial(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		_ = c.Close()
		return nil, errSessionAbandoned
	}
	tc := &trackedConn{Conn: c, d: d}
	d.open[tc] = struct{}{}
	return tc, nil
}

// abandon closes every open connection and refuses new ones.
func (d *sessionDialer) abandon() {
	d.mu.Lock()
	d.dead = true
	open := d.open
	d.open = map[*trackedConn]struct{}{}
	d.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

// trackedConn leaves its dialer's open set when closed.
type trackedConn struct {
	net.Conn
	d *sessionDialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.open, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}

func findTool(ctx context.Context, s *mcp.ClientSession, name string) (*mcp.Tool, error) {
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp tools/list: %w", err)
		}
		if tool.Name == name {
			return tool, nil
		}
	}
	return nil, fmt.Errorf("mcp server has no tool %q", name)
}

// Hints returns the tool's annotations as the server declares them (known
// after the first session).
func (t *MCPTool) Hints() (idempotent, readOnly, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Hints(t.tool)
}

// Send implements Tool: one tools/call on conn, in the current session.
func (t *MCPTool) Send(ctx context.Context, conn net.Conn, call *harness.Call, deadline time.Time) harness.Reply {
	t.mu.Lock()
	s, sid, fresh := t.session, t.sid, t.fresh
	t.fresh = false
	t.mu.Unlock()
	if s == nil {
		return harness.Reply{Outcome: harness.Unknown, Err: errors.New("tools/call: no MCP session (the tool was not made ready)")}
	}
	note := fmt.Sprintf("session %d (same)", sid)
	if fresh {
		note = fmt.Sprintf("session %d (new)", sid)
	}
	var params callParams
	if err := json.Unmarshal(call.Wire, &params); err != nil {
		return harness.Reply{Outcome: harness.Unknown, Err: fmt.Errorf("tools/call: the call's parameters are not JSON: %w", err), Note: note}
	}
	_ = conn.SetDeadline(deadline)
	handed := frame(conn)
	t.conns <- handed
	cctx, cancel := context.WithDeadline(context.WithValue(ctx, opKey{}, call.Op), deadline)
	defer cancel()
	res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: params.Name, Arguments: params.Arguments, Meta: params.Meta})
	// A connection the client never dialled stays queued: take it back.
	select {
	case c := <-t.conns:
		if c != handed {
			t.conns <- c
		}
	default:
	}
	if err != nil {
		t.mu.Lock()
		t.suspect = true
		t.mu.Unlock()
		// The request went out on an established connection: whether the
		// server ran it is unknown (the SDK's "rejected by transport"
		// included).
		return harness.Reply{Outcome: harness.Unknown, Err: fmt.Errorf("tools/call: %w", err), Note: note}
	}
	return ResultReply(res, t.resultID, note)
}

// Close ends the MCP session.
func (t *MCPTool) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.session == nil {
		return nil
	}
	err := closeSession(t.session, t.dialer)
	t.session, t.dialer = nil, nil
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Request implements RequestDescriber: the tools/call params.
func (t *MCPTool) Request(call *harness.Call) harness.Request {
	return harness.Request{Transport: "mcp", Target: t.Upstream(), Wire: string(call.Wire), Endpoint: t.c.URL}
}

// Secrets implements harness.Secretive: the environment variables its
// templates read.
func (t *MCPTool) Secrets() []string {
	var names []string
	for _, tpl := range t.headers {
		names = append(names, tpl.EnvNames()...)
	}
	return append(names, t.caller.args.EnvNames()...)
}

// opKey is the context key of the operation a tools/call's HTTP request
// carries, for its header templates.
type opKey struct{}

// withHeaders adds the rendered headers to every request rt sends (none
// when headers is empty).
func withHeaders(headers map[string]*harness.Template, rt http.RoundTripper) http.RoundTripper {
	if len(headers) == 0 {
		return rt
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		op, _ := req.Context().Value(opKey{}).(harness.Operation)
		req = req.Clone(req.Context())
		for k, tpl := range headers {
			v, err := tpl.Render(op)
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", k, err)
			}
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
