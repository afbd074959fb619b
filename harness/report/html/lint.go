package html

import "github.com/onceproof/onceproof/harness/report"

// lintSection is the lint section of the HTML page.
type lintSection struct {
	Headline string
	FailOn   string // the threshold, "" when the lint only advises
	Rows     []lintRow
	Clean    []string // tools without findings
	Skipped  []lintSkip
	Rules    []lintRule // the rules that fired, with their explanation
}

type lintRow struct {
	Tool     string
	Severity string
	Class    string // sev-error, sev-warning or sev-info
	Rule     string
	Field    string
	Where    string
	Message  string
	Why      string
	Fails    bool // reaches the fail-on threshold
}

type lintSkip struct{ Tool, Reason string }

type lintRule struct {
	ID, Severity, Class, Why string
}

// buildLint builds the lint section; nil when no tool was linted.
func buildLint(r *report.Report) *lintSection {
	l := &lintSection{Headline: r.LintHeadline()}
	linted := false
	for _, t := range r.Tools {
		if t.Lint == nil {
			continue
		}
		linted = true
		switch {
		case t.Lint.Skipped != "":
			l.Skipped = append(l.Skipped, lintSkip{t.Name, t.Lint.Skipped})
		case len(t.Lint.Findings) == 0:
			l.Clean = append(l.Clean, t.Name)
		}
		if on := t.Lint.FailOn; on != "" && on != report.SeverityNever {
			l.FailOn = string(on)
		}
	}
	if !linted {
		return nil
	}
	failOn := report.Severity(l.FailOn)
	if failOn == "" {
		failOn = report.SeverityNever
	}
	seen := map[string]bool{}
	for _, f := range r.LintFindings() {
		class := "sev-" + string(f.Severity)
		l.Rows = append(l.Rows, lintRow{Tool: f.Tool, Severity: string(f.Severity), Class: class, Rule: f.Rule, Field: f.Field,
			Where: f.Where, Message: f.Message, Why: f.Explanation, Fails: f.Severity.Reaches(failOn)})
		if !seen[f.Rule] {
			seen[f.Rule] = true
			l.Rules = append(l.Rules, lintRule{ID: f.Rule, Severity: string(f.Severity), Class: class, Why: f.Explanation})
		}
	}
	return l
}
