package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
)

// Caller renders an MCP tool's tools/call for an operation, whatever the
// transport carries it: both MCP transports share it.
type Caller struct {
	name string
	c    CallConfig
	args *harness.Template
}

// NewCaller parses c's argument template for the tool named name (errors
// are [harness.ConfigError]s naming mcp.arguments).
func NewCaller(name string, c CallConfig) (*Caller, error) {
	if c.Tool == "" {
		return nil, harness.ConfigError(name, "mcp.tool", errors.New("no MCP tool name"))
	}
	args, err := harness.ParseTemplate("arguments", c.Arguments)
	if err != nil {
		return nil, harness.ConfigError(name, "mcp.arguments", err)
	}
	return &Caller{name: name, c: c, args: args}, nil
}

// callParams is what Params renders: the tools/call parameters.
type callParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// Params renders op's tools/call parameters as JSON: the arguments, with
// the key in its argument or _meta field.
func (c *Caller) Params(op harness.Operation) ([]byte, error) {
	s, err := c.args.Render(op)
	if err != nil {
		return nil, harness.ConfigError(c.name, "mcp.arguments", err)
	}
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, harness.ConfigError(c.name, "mcp.arguments", fmt.Errorf("the rendered arguments are not a JSON object: %w: %s", err, harness.Snippet([]byte(s))))
	}
	call := callParams{Name: c.c.Tool, Arguments: args}
	if c.c.KeyArgument != "" {
		args[c.c.KeyArgument] = op.Key
	}
	if c.c.KeyMeta != "" {
		call.Meta = map[string]any{c.c.KeyMeta: op.Key}
	}
	wire, err := json.Marshal(call)
	if err != nil {
		return nil, harness.ConfigError(c.name, "mcp.arguments", err)
	}
	return wire, nil
}

// Tool is the MCP tool's name.
func (c *Caller) Tool() string { return c.c.Tool }

// ErrNoKey marks an MCP write tool whose spec says nowhere where the
// idempotency key travels.
var ErrNoKey = errors.New("the key travels nowhere")

// CheckKey refuses a tool that does not claim readOnlyHint (it makes
// effects, so its calls carry a key) when its spec puts the key nowhere. A
// read-only tool needs no key; whether a tool claims to be one is known
// once the server listed it (tool, nil before).
func (c *Caller) CheckKey(tool *mcp.Tool) error {
	if c.c.KeyArgument != "" || c.c.KeyMeta != "" || strings.Contains(c.c.Arguments, ".Key") {
		return nil
	}
	if tool != nil && tool.Annotations != nil && tool.Annotations.ReadOnlyHint {
		return nil
	}
	return &harness.FieldError{Field: "mcp", Err: fmt.Errorf("%w: %s does not claim readOnlyHint, so its calls need a key: set key_argument or key_meta, or use {{.Key}} in the arguments",
		ErrNoKey, c.c.Tool)}
}

// Hints are tool's annotations as the server declares them; known is
// false while tool is nil (not listed yet).
func Hints(tool *mcp.Tool) (idempotent, readOnly, known bool) {
	if tool == nil || tool.Annotations == nil {
		return false, false, tool != nil
	}
	return tool.Annotations.IdempotentHint, tool.Annotations.ReadOnlyHint, true
}

// ResultReply maps a tool result to the attempt's reply: ok, with an
// HTTP-like status (see [Status]), the structured content as the body, and
// the result id resultID (nil for none) finds in a success.
func ResultReply(res *mcp.CallToolResult, resultID *harness.Pointer, note string) harness.Reply {
	status, body := Status(res)
	r := harness.Reply{Outcome: harness.OK, Status: status, Body: harness.Snippet(body), FullBody: body, Note: note}
	if resultID != nil && status/100 == 2 {
		r.ResultID = harness.ReadResultID(*resultID, Structured(res))
	}
	return r
}

// Status maps a tool result to an HTTP-like status: 200 for success; for
// an error result, the "status" number of its structured content when there
// is one, 422 otherwise (the tool refused).
func Status(res *mcp.CallToolResult) (int, []byte) {
	body := Structured(res)
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

// Structured is the result's structured content as JSON, or its first
// text content.
func Structured(res *mcp.CallToolResult) []byte {
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
