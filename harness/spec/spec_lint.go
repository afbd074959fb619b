package spec

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/lint"
	omcp "github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/transport"
)

// MCPServer is the MCP server of a tool served by one (its section's
// [omcp.Server]: tools/list, the tools/call it makes); ok is false for
// other tools.
func (t Tool) MCPServer() (omcp.Server, bool) {
	c := t.Config
	if d, ok := c.(interface {
		WithDir(string) transport.Config
	}); ok {
		c = d.WithDir(t.Common.Dir)
	}
	srv, ok := c.(omcp.Server)
	return srv, ok
}

// LintHTTP lints what the spec declares for an HTTP tool (its method and key
// header). Each finding's Where is the spec line of the field it is about.
// It returns an empty result for an MCP tool.
func (t Tool) LintHTTP() lint.Result {
	if _, ok := t.Config.(httpConfig); !ok {
		return lint.Result{Findings: []lint.Finding{}}
	}
	key := harness.DefaultKeyHeader
	if t.HTTP.KeyHeader != nil {
		key = *t.HTTP.KeyHeader
	}
	res := lint.HTTP(lint.HTTPTool{Name: t.Name, Method: cmp.Or(t.HTTP.Method, "POST"), KeyHeader: key, Body: t.HTTP.Body})
	for i, f := range res.Findings {
		res.Findings[i].Where, res.Findings[i].File, res.Findings[i].Line = t.where(f.Field)
	}
	return res
}

// LintMCP lints tool, the MCP tool the spec entry names as the server lists
// it, against the entry (its key_argument or key_meta). Findings carry the
// entry's name; their Where is the spec line of the mcp.tool field, or of
// the spec field a finding is about.
func (t Tool) LintMCP(tool *mcp.Tool) lint.Result {
	srv, ok := t.Config.(omcp.Server)
	if !ok {
		return lint.Result{Findings: []lint.Finding{}}
	}
	call := srv.Call()
	res := lint.MCP(tool, lint.MCPOptions{Name: t.Name, Spec: true, KeyArgument: call.KeyArgument, KeyMeta: call.KeyMeta})
	for i, f := range res.Findings {
		field := "mcp.tool"
		if strings.HasPrefix(f.Field, "mcp.") {
			field = f.Field
		}
		res.Findings[i].Where, res.Findings[i].File, res.Findings[i].Line = t.where(field)
	}
	return res
}

// where is "file:line" of field (relative to the tool), or of its closest
// enclosing field, with the file and the line.
func (t Tool) where(field string) (where, file string, line int) {
	e := t.locate(t.file, field, "")
	switch {
	case e.File == "":
		return "", "", 0
	case e.Line == 0:
		return e.File, e.File, 0
	}
	return fmt.Sprintf("%s:%d", e.File, e.Line), e.File, e.Line
}

// FieldError returns a spec error about field (relative to the tool, e.g.
// "mcp.tool") located at its line.
func (t Tool) FieldError(field, msg string) *Error { return t.locate(t.file, field, msg) }
