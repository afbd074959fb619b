package lint

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Severity is how bad a finding is; as a threshold (--fail-on) it is the
// least severity that fails a run.
type Severity string

// The severities, worst first, and the threshold no finding reaches.
const (
	// Error: as described, the tool will be called twice for one intent in
	// ordinary operation (a retry after a timeout).
	Error Severity = "error"
	// Warning: a gap that makes duplicates possible, or a hint that
	// misleads a client, without making them the normal case.
	Warning Severity = "warning"
	// Info: advice that makes the tool easier to call correctly.
	Info Severity = "info"
	// Never is a threshold only: no finding reaches it.
	Never Severity = "never"
)

// ErrSeverity is returned for an unknown severity or threshold.
var ErrSeverity = errors.New("unknown severity")

// ParseSeverity parses a severity or threshold: error, warning, info or
// never.
func ParseSeverity(s string) (Severity, error) {
	switch sv := Severity(s); sv {
	case Error, Warning, Info, Never:
		return sv, nil
	}
	return "", fmt.Errorf("%w %q: want error, warning, info or never", ErrSeverity, s)
}

func (s Severity) rank() int {
	switch s {
	case Info:
		return 1
	case Warning:
		return 2
	case Error:
		return 3
	case Never:
		return 4
	}
	return 0
}

// Reaches reports whether a finding of severity s fails a run whose
// threshold is t.
func (s Severity) Reaches(t Severity) bool {
	return s != Never && s.rank() > 0 && s.rank() >= t.rank()
}

// Finding is one problem a rule found in one tool.
type Finding struct {
	// Rule is the rule's stable id, e.g. "key-minted-per-call".
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Tool is the tool's name: the MCP tool's, or the spec entry's when the
	// tool came from a spec.
	Tool string `json:"tool"`
	// Field is what the finding is about, as a path into what the model
	// reads ("description", "annotations.readOnlyHint",
	// "inputSchema.properties.idempotency_key") or into the spec
	// ("http.method").
	Field string `json:"field"`
	// Message says what is wrong with this tool, quoting it where it helps.
	Message string `json:"message"`
	// Explanation is the rule's reason: why this leads to duplicates and
	// what to do instead.
	Explanation string `json:"explanation"`
	// Where is the spec file and line the tool (or field) was declared at,
	// when it came from a spec ("tools.yaml:12").
	Where string `json:"where,omitempty"`
}

// String renders f on one line: "error key-minted-per-call send_invoice
// description: ...".
func (f Finding) String() string {
	where := ""
	if f.Where != "" {
		where = " (" + f.Where + ")"
	}
	return fmt.Sprintf("%s %s %s %s%s: %s", f.Severity, f.Rule, f.Tool, f.Field, where, f.Message)
}

// Result is the lint of one tool.
type Result struct {
	// Checked lists the ids of the rules that applied to the tool, in
	// table order: a rule not listed did not look.
	Checked []string `json:"checked"`
	// FailOn is the run's threshold: findings that reach it fail the run
	// (Never when the lint only advises, as before certify).
	FailOn Severity `json:"fail_on"`
	// Skipped says why the tool was not linted ("" when it was): its MCP
	// server could not be reached, or it runs in a container not started
	// yet.
	Skipped  string    `json:"skipped,omitempty"`
	Findings []Finding `json:"findings"`
}

// Failing returns the findings that reach FailOn.
func (r *Result) Failing() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity.Reaches(r.FailOn) {
			out = append(out, f)
		}
	}
	return out
}

// Summary counts findings by severity: "2 errors, 1 warning", or "no
// findings".
func Summary(fs []Finding) string {
	var parts []string
	for _, sv := range []Severity{Error, Warning, Info} {
		n := 0
		for _, f := range fs {
			if f.Severity == sv {
				n++
			}
		}
		switch {
		case n == 1:
			parts = append(parts, "1 "+string(sv))
		case n > 1 && sv == Info:
			parts = append(parts, fmt.Sprintf("%d %s", n, sv))
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", n, sv))
		}
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}

// Sort orders findings by severity (worst first), then tool, rule and
// field.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(b.Severity.rank()-a.Severity.rank(), cmp.Compare(a.Tool, b.Tool),
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
