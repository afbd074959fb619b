package lint

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness/report"
)

// The findings model is report's (a tool's report carries its lint
// result); these are the names lint's users know it by.
type (
	Severity = report.Severity
	Finding  = report.Finding
	Result   = report.LintResult
)

// The severities, worst first, and the threshold no finding reaches.
const (
	Error   = report.SeverityError
	Warning = report.SeverityWarning
	Info    = report.SeverityInfo
	Never   = report.SeverityNever
)

// ErrSeverity is returned for an unknown severity or threshold.
var ErrSeverity = report.ErrSeverity

// ParseSeverity parses a severity or threshold: error, warning, info or
// never.
func ParseSeverity(s string) (Severity, error) { return report.ParseSeverity(s) }

// Summary counts findings by severity: "2 errors, 1 warning", or "no
// findings".
func Summary(fs []Finding) string { return report.Summary(fs) }

// Sort orders findings by severity (worst first), then tool, rule and
// field.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(b.Severity.Rank()-a.Severity.Rank(), cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(ruleIndex(a.Rule), ruleIndex(b.Rule)), cmp.Compare(a.Field, b.Field))
	})
}

// MCPOptions is what a spec declares about an MCP tool, for [MCP].
type MCPOptions struct {
	// Name names the tool in findings (default: the MCP tool's name).
	Name string
	// Spec is set when the tool comes from a spec: the spec rules apply.
	Spec bool
	// KeyArgument is the argument the spec puts the key in; it is a key
	// parameter whatever its name.
	KeyArgument string
	// KeyMeta is the _meta field the spec puts the key in: the tool takes
	// its key outside its arguments.
	KeyMeta string
}

// MCP lints an MCP tool as a client lists it (tools/list).
func MCP(t *mcp.Tool, opts MCPOptions) Result {
	s := &subject{
		target:      TargetMCP,
		tool:        cmp.Or(opts.Name, t.Name),
		name:        t.Name,
		description: t.Description,
		ann:         t.Annotations,
		spec:        opts.Spec,
		keyArgument: opts.KeyArgument,
		keyMeta:     opts.KeyMeta,
	}
	if s.ann == nil {
		s.ann = &mcp.ToolAnnotations{}
	}
	for k := range t.Meta {
		if strings.Contains(normalize(k), "idempot") {
			s.metaKey = k
		}
	}
	s.schema = asObject(t.InputSchema)
	s.params = walk(s.schema)
	for _, p := range s.params {
		if p.path == opts.KeyArgument || isKeyName(p.name, p.description) {
			s.keys = append(s.keys, p)
		}
	}
	return run(s)
}

// HTTPTool is what a spec declares about an HTTP tool.
type HTTPTool struct {
	// Name is the spec entry's name.
	Name string
	// Method is the HTTP method (POST when the spec says none).
	Method string
	// KeyHeader is the header that carries the key ("" when it travels only
	// in the body).
	KeyHeader string
	// Body is the body template.
	Body string
}

// HTTP lints an HTTP tool as its spec declares it.
func HTTP(t HTTPTool) Result {
	return run(&subject{target: TargetHTTP, tool: t.Name, name: t.Name, method: cmp.Or(t.Method, "POST"), keyHeader: t.KeyHeader, body: t.Body})
}

// run applies every rule that fits s.
func run(s *subject) Result {
	res := Result{Findings: []Finding{}}
	for _, r := range rules {
		if !r.appliesTo(s) {
			continue
		}
		res.Checked = append(res.Checked, r.ID)
		for _, h := range r.check(s) {
			res.Findings = append(res.Findings, Finding{Rule: r.ID, Severity: r.Severity, Tool: s.tool, Field: h.field, Message: h.msg, Explanation: r.Why})
		}
	}
	return res
}

// asObject returns an input schema as decoded JSON (nil when it is not an
// object): the client's map[string]any, a server's *jsonschema.Schema or raw
// JSON alike.
func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}
