package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
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
}

// MCPTool is a write tool reached with an MCP tools/call. Every call goes
// out on its own connection, which the harness dials: a retry goes out on a
// new connection in the same MCP session when the session survives, in a
// new session otherwise, and the attempt log says which.
type MCPTool struct {
	c        MCPConfig
	url      *url.URL
	upstream string
	args     *harness.Template
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
	if t.args, err = harness.ParseTemplate("arguments", c.Arguments); err != nil {
		return nil, harness.ConfigError(c.Name, "mcp.arguments", err)
	}
	if c.ResultID != "" {
		p, err := harness.ParsePointer(c.ResultID)
		if err != nil {
			return nil, harness.ConfigError(c.Name, "result_id", err)
		}
		t.resultID = &p
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
	return &MCPTool{c: t.c, url: t.url, upstream: t.upstream, args: t.args, resultID: t.resultID, conns: make(chan net.Conn, 64), tool: t.tool}
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

// mcpCall is what Prepare renders: the tools/call parameters.
type mcpCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// Prepare implements Tool: Wire is the tools/call parameters as JSON.
func (t *MCPTool) Prepare(op harness.Operation) (*harness.Call, error) {
	s, err := t.args.Render(op)
	if err != nil {
		return nil, harness.ConfigError(t.c.Name, "mcp.arguments", err)
	}
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, harness.ConfigError(t.c.Name, "mcp.arguments", fmt.Errorf("the rendered arguments are not a JSON object: %w: %s", err, harness.Snippet([]byte(s))))
	}
	call := mcpCall{Name: t.c.Tool, Arguments: args}
	if t.c.KeyArgument != "" {
		args[t.c.KeyArgument] = op.Key
	}
	if t.c.KeyMeta != "" {
		call.Meta = map[string]any{t.c.KeyMeta: op.Key}
	}
	wire, err := json.Marshal(call)
	if err != nil {
		return nil, harness.ConfigError(t.c.Name, "mcp.arguments", err)
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
		HTTPClient: &http.Client{Transport: &http.Transport{
			DisableKeepAlives: true, // one request, one connection: nothing is re-sent behind the harness's back
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				select {
				case c := <-t.conns: // the connection Send handed over for a tools/call
					return c, nil
				default:
					return sd.DialContext(ctx)
				}
			},
		}},
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

// ErrNoKey marks an MCP write tool whose spec says nowhere where the
// idempotency key travels.
var ErrNoKey = errors.New("the key travels nowhere")

// checkKeyTravels refuses a tool that does not claim readOnlyHint (it makes
// effects, so its calls carry a key) when its spec puts the key nowhere. A
// read-only tool needs no key; whether a tool claims to be one is known
// once the server listed it.
func (t *MCPTool) checkKeyTravels() error {
	if t.c.KeyArgument != "" || t.c.KeyMeta != "" || strings.Contains(t.c.Arguments, ".Key") {
		return nil
	}
	if t.tool != nil && t.tool.Annotations != nil && t.tool.Annotations.ReadOnlyHint {
		return nil
	}
	return &harness.FieldError{Field: "mcp", Err: fmt.Errorf("%w: %s does not claim readOnlyHint, so its calls need a key: set key_argument or key_meta, or use {{.Key}} in the arguments",
		ErrNoKey, t.c.Tool)}
}

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
	if t.tool == nil || t.tool.Annotations == nil {
		return false, false, t.tool != nil
	}
	return t.tool.Annotations.IdempotentHint, t.tool.Annotations.ReadOnlyHint, true
}

// Send implements Tool: one tools/call on conn, in the current session.
func (t *MCPTool) Send(ctx context.Context, conn net.Conn, call *harness.Call, deadline time.Time) harness.Reply {
	t.mu.Lock()
	s, sid, fresh := t.session, t.sid, t.fresh
	t.fresh = false
	t.mu.Unlock()
	if s == nil {
		panic("harness: MCPTool.Send before Ready")
	}
	note := fmt.Sprintf("session %d (same)", sid)
	if fresh {
		note = fmt.Sprintf("session %d (new)", sid)
	}
	var params mcpCall
	if err := json.Unmarshal(call.Wire, &params); err != nil {
		panic(fmt.Sprintf("harness: MCP call wire: %v", err))
	}
	_ = conn.SetDeadline(deadline)
	t.conns <- conn
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: params.Name, Arguments: params.Arguments, Meta: params.Meta})
	// A connection the client never dialled stays queued: take it back.
	select {
	case c := <-t.conns:
		if c != conn {
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
	status, body := mcpStatus(res)
	r := harness.Reply{Outcome: harness.OK, Status: status, Body: harness.Snippet(body), FullBody: body, Note: note}
	if t.resultID != nil && status/100 == 2 {
		r.ResultID = harness.ReadResultID(*t.resultID, mcpStructured(res))
	}
	return r
}

// mcpStatus maps a tool result to an HTTP-like status: 200 for success; for
// an error result, the "status" number of its structured content when there
// is one, 422 otherwise (the tool refused).
func mcpStatus(res *mcp.CallToolResult) (int, []byte) {
	body := mcpStructured(res)
	if !res.IsError {
		return 200, body
	}
	var s struct {
		Status int `json:"status"`
	}
	if json.Unmarshal(body, &s) == nil && s.Status >= 400 && s.Status < 600 {
		return s.Status, body
	}
	return 422, body
}

// mcpStructured is the result's structured content as JSON, or its first
// text content.
func mcpStructured(res *mcp.CallToolResult) []byte {
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return b
		}
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return []byte(tc.Text)
		}
	}
	return nil
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
