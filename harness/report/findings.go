package report

import (
	"errors"
	"fmt"
	"strings"
)

// Severity is how bad a finding is; as a threshold (--fail-on) it is the
// least severity that fails a run.
type Severity string

// The severities, worst first, and the threshold no finding reaches.
const (
	// SeverityError: as described, the tool will be called twice for one intent in
	// ordinary operation (a retry after a timeout).
	SeverityError Severity = "error"
	// SeverityWarning: a gap that makes duplicates possible, or a hint that
	// misleads a client, without making them the normal case.
	SeverityWarning Severity = "warning"
	// SeverityInfo: advice that makes the tool easier to call correctly.
	SeverityInfo Severity = "info"
	// SeverityNever is a threshold only: no finding reaches it.
	SeverityNever Severity = "never"
)

// ErrSeverity is returned for an unknown severity or threshold.
var ErrSeverity = errors.New("unknown severity")

// ParseSeverity parses a severity or threshold: error, warning, info or
// never.
func ParseSeverity(s string) (Severity, error) {
	switch sv := Severity(s); sv {
	case SeverityError, SeverityWarning, SeverityInfo, SeverityNever:
		return sv, nil
	}
	return "", fmt.Errorf("%w %q: want error, warning, info or never", ErrSeverity, s)
}

// Rank orders severities: 1 info, 2 warning, 3 error, 4 never, 0 unknown.
func (s Severity) Rank() int {
	switch s {
	case SeverityInfo:
		return 1
	case SeverityWarning:
		return 2
	case SeverityError:
		return 3
	case SeverityNever:
		return 4
	}
	return 0
}

// Reaches reports whether a finding of severity s fails a run whose
// threshold is t.
func (s Severity) Reaches(t Severity) bool {
	return s != SeverityNever && s.Rank() > 0 && s.Rank() >= t.Rank()
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
	// File and Line are Where as a path and a line number (Line 0 when
	// unknown), for annotations and code scanning.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
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

// LintResult is the lint of one tool.
type LintResult struct {
	// Checked lists the ids of the rules that applied to the tool, in
	// table order: a rule not listed did not look.
	Checked []string `json:"checked"`
	// FailOn is the run's threshold: findings that reach it fail the run
	// (SeverityNever when the lint only advises, as before certify).
	FailOn Severity `json:"fail_on"`
	// Skipped says why the tool was not linted ("" when it was): its MCP
	// server could not be reached, or it runs in a container not started
	// yet.
	Skipped  string    `json:"skipped,omitempty"`
	Findings []Finding `json:"findings"`
}

// Failing returns the findings that reach FailOn.
func (r *LintResult) Failing() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity.Reaches(r.FailOn) {
			out = append(out, f)
		}
	}
	return out
}

// Summary Counts findings by severity: "2 errors, 1 warning", or "no
// findings".
func Summary(fs []Finding) string {
	var parts []string
	for _, sv := range []Severity{SeverityError, SeverityWarning, SeverityInfo} {
		n := 0
		for _, f := range fs {
			if f.Severity == sv {
				n++
			}
		}
		switch {
		case n == 1:
			parts = append(parts, "1 "+string(sv))
		case n > 1 && sv == SeverityInfo:
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
