package mcp

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/transport"
)

// CallFields are the fields of the mcp section that both MCP transports
// (Streamable HTTP, stdio) read: which tool, its arguments, where the key
// travels, key_format and timeout.
var CallFields = []string{"tool", "arguments", "key_argument", "key_meta", "key_format", "timeout"}

// Unsupported are the tool-level sections an MCP tool cannot have.
var Unsupported = map[string]string{
	"downstream":   "a downstream is played for http tools (an MCP tool's own calls are not attributed)",
	"lookup":       "a lookup is an HTTP request to the tool: for http tools",
	"long_running": "long-running operations are followed for http tools (an MCP tool has no status call)",
}

// NoHeaders is why an MCP tool's contract names no headers.
const NoHeaders = "an MCP result has no headers"

// Kind is the transport row of MCP over Streamable HTTP: an mcp section
// with a url.
var Kind = &transport.Kind{
	Name:        "mcp",
	Section:     "mcp",
	Selector:    "url",
	Fields:      append([]string{"url"}, append(slices.Clone(CallFields), "headers")...),
	Records:     []string{"mcp"},
	Unsupported: Unsupported,
	NoHeaders:   NoHeaders,
	Discover: &transport.Discover{Flag: "mcp", Metavar: "URL", Usage: "an MCP server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8090/mcp",
		Section: func(arg string) (transport.Config, error) {
			u, err := url.Parse(arg)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("want http://host:port/path, got %q", arg)
			}
			return httpSection{c: MCPConfig{URL: arg}}, nil
		}},
	Decode: func(s transport.Section) transport.Config {
		c := MCPConfig{}
		if u, ok := s.String("url", "the server's MCP endpoint, http://host:port/mcp"); ok {
			if msg := checkURL(u); msg != "" {
				s.Errorf("url", "%s", msg)
			}
			c.URL = u
		}
		call := DecodeCall(s)
		c.Tool, c.Arguments, c.KeyArgument, c.KeyMeta, c.KeyFormat, c.Timeout = call.Tool, call.Arguments, call.KeyArgument, call.KeyMeta, call.KeyFormat, call.Timeout
		c.Headers = DecodeHeaders(s)
		return httpSection{c: c}
	},
}

// httpSection is a decoded mcp section with a url.
type httpSection struct{ c MCPConfig }

// Build implements transport.Config.
func (h httpSection) Build(c transport.Common) (harness.Tool, error) {
	m := h.c
	m.Name, m.Oracle, m.ResultID, m.Contract, m.Guard = c.Name, c.Oracle, c.ResultID, c.Contract, c.Guard
	return NewMCPTool(m)
}

// Targets implements transport.Config.
func (h httpSection) Targets() []harness.Target {
	return []harness.Target{{Field: "mcp.url", URL: h.c.URL}}
}

// Config returns the section's configuration (without the fields every
// tool shares).
func (h httpSection) Config() MCPConfig { return h.c }

// CallConfig is the tools/call an MCP tool makes, whatever the transport.
type CallConfig struct {
	// Tool is the MCP tool's name.
	Tool string
	// Arguments is a template rendering the tool's arguments as a JSON
	// object.
	Arguments string
	// KeyArgument, when set, is the argument the harness puts the key in;
	// KeyMeta, when set, the _meta field. With neither, Arguments must use
	// {{.Key}} itself, unless the tool claims readOnlyHint (checked once
	// the server has listed the tool).
	KeyArgument string
	KeyMeta     string
	KeyFormat   harness.KeyFormat
	// Timeout is the caller's deadline for one call (default 2s).
	Timeout time.Duration
}

// DecodeCall decodes the fields of s that both MCP transports read
// ([CallFields]).
func DecodeCall(s transport.Section) CallConfig {
	var c CallConfig
	if v, ok := s.String("tool", "the MCP tool's name"); ok {
		if v == "" {
			s.Errorf("tool", "empty tool name")
		}
		c.Tool = v
	}
	c.Arguments, _ = s.Template("arguments", "arguments", `the tool's arguments as a JSON object template, e.g. '{"subject":"{{.Marker}}"}'`)
	for _, name := range []string{"key_argument", "key_meta"} {
		if v, ok := s.String(name, ""); ok {
			if strings.TrimSpace(v) == "" {
				s.Errorf(name, "empty: leave it out, or name the field that carries the key")
			}
			if name == "key_argument" {
				c.KeyArgument = v
			} else {
				c.KeyMeta = v
			}
		}
	}
	c.KeyFormat, c.Timeout = s.KeyFormat(), s.Timeout()
	return c
}

// reservedHeaders are the headers of a Streamable HTTP request that the
// MCP client sets itself.
var reservedHeaders = []string{"Host", "Content-Length", "Content-Type", "Accept", "Transfer-Encoding", "User-Agent", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}

// DecodeHeaders decodes mcp.headers: names that are HTTP tokens and not
// set by the client, values templates that render on one line.
func DecodeHeaders(s transport.Section) map[string]string {
	m, ok := s.StringMap("headers")
	if !ok {
		return m
	}
	canon := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v := m[name]
		field := "headers." + name
		ck := http.CanonicalHeaderKey(name)
		switch {
		case !harness.IsToken(name):
			s.Errorf(field, "bad header name %q", name)
			continue
		case slices.Contains(reservedHeaders, ck):
			s.Errorf(field, "%s is set by the MCP client", ck)
			continue
		case canon[ck] != "":
			s.Errorf(field, "duplicate header (same as %s)", canon[ck])
			continue
		}
		canon[ck] = name
		tpl, err := harness.ParseTemplate("header "+name, v)
		if err != nil {
			s.Errorf(field, "%v", err)
			continue
		}
		if r, err := tpl.Render(harness.Operation{ID: "op-check", Key: "key-check", Marker: "marker-check", Seed: 1}); err != nil {
			s.Errorf(field, "%v", err)
		} else if strings.ContainsAny(r, "\r\n") {
			s.Errorf(field, "rendered value contains a line break: %q", r)
		}
	}
	return m
}

// checkURL says what is wrong with an MCP endpoint ("" if nothing).
func checkURL(s string) string {
	if strings.Contains(s, "{{") {
		return fmt.Sprintf("bad URL %q: the tool url is not a template; put {{.Marker}} in the body or a header", s)
	}
	return harness.CheckHTTPURL(s)
}

// Server is an MCP server a spec entry names, whatever the transport:
// lint and discover read what the model reads through it.
type Server interface {
	// ListTools connects (where g allows) and lists the server's tools.
	ListTools(ctx context.Context, g *harness.Guard) ([]*mcp.Tool, error)
	// Where names the server in messages ("the server at URL").
	Where() string
	// Call is the tools/call the entry makes.
	Call() CallConfig
	// Reach is how the server is reached: its URL, or its command.
	Reach() Reach
}

// Reach is how an MCP server is reached: a Streamable HTTP endpoint, or a
// command that starts a stdio server (in Dir).
type Reach struct {
	URL     string
	Command []string
	Dir     string
}

// Reach implements Server.
func (h httpSection) Reach() Reach { return Reach{URL: h.c.URL} }

// listTimeout bounds listing a server's tools.
const listTimeout = 15 * time.Second

// ListTools implements Server: a session through g (with the section's
// headers) lists the tools.
func (h httpSection) ListTools(ctx context.Context, g *harness.Guard) ([]*mcp.Tool, error) {
	headers := map[string]*harness.Template{}
	for k, v := range h.c.Headers {
		tpl, err := harness.ParseTemplate("header "+k, v)
		if err != nil {
			return nil, err
		}
		headers[k] = tpl
	}
	return ListTools(ctx, h.c.URL, headers, g)
}

// Where implements Server.
func (h httpSection) Where() string { return "the server at " + h.c.URL }

// Call implements Server.
func (h httpSection) Call() CallConfig {
	return CallConfig{Tool: h.c.Tool, Arguments: h.c.Arguments, KeyArgument: h.c.KeyArgument, KeyMeta: h.c.KeyMeta, KeyFormat: h.c.KeyFormat, Timeout: h.c.Timeout}
}

// ListTools lists the tools of the Streamable HTTP server at endpoint,
// connecting only where g lets it, with headers (templates, rendered for
// no operation) on every request.
func ListTools(ctx context.Context, endpoint string, headers map[string]*harness.Template, g *harness.Guard) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "onceproof", Version: "1"}, nil)
	hc := g.HTTPClient(0)
	hc.Transport = withHeaders(headers, hc.Transport)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true, HTTPClient: hc}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w", endpoint, err)
	}
	defer s.Close()
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp %s: tools/list: %w", endpoint, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}
