package harness

import (
	"github.com/onceproof/onceproof/harness/lint"
)

// rhLint is the lint section of the HTML page.
type rhLint struct {
	Headline string
	FailOn   string // the threshold, "" when the lint only advises
	Rows     []rhLintRow
	Clean    []string // tools without findings
	Skipped  []rhLintSkip
	Rules    []rhLintRule // the rules that fired, with their explanation
}

type rhLintRow struct {
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

type rhLintSkip struct{ Tool, Reason string }

type rhLintRule struct {
	ID, Severity, Class, Why string
}

// rhBuildLint builds the lint section; nil when no tool was linted.
func rhBuildLint(r *Report) *rhLint {
	l := &rhLint{Headline: r.lintHeadline()}
	linted := false
	for _, t := range r.Tools {
		if t.Lint == nil {
			continue
		}
		linted = true
		switch {
		case t.Lint.Skipped != "":
			l.Skipped = append(l.Skipped, rhLintSkip{t.Name, t.Lint.Skipped})
		case len(t.Lint.Findings) == 0:
			l.Clean = append(l.Clean, t.Name)
		}
		if on := t.Lint.FailOn; on != "" && on != lint.Never {
			l.FailOn = string(on)
		}
	}
	if !linted {
		return nil
	}
	failOn := lint.Severity(l.FailOn)
	if failOn == "" {
		failOn = lint.Never
	}
	seen := map[string]bool{}
	for _, f := range r.LintFindings() {
		class := "sev-" + string(f.Severity)
		l.Rows = append(l.Rows, rhLintRow{Tool: f.Tool, Severity: string(f.Severity), Class: class, Rule: f.Rule, Field: f.Field,
			Where: f.Where, Message: f.Message, Why: f.Explanation, Fails: f.Severity.Reaches(failOn)})
		if !seen[f.Rule] {
			seen[f.Rule] = true
			l.Rules = append(l.Rules, rhLintRule{ID: f.Rule, Severity: string(f.Severity), Class: class, Why: f.Explanation})
		}
	}
	return l
}

// rhLintTemplateText holds the lint section and its style sheet, added to
// the page only when a tool was linted.
const rhLintTemplateText = `{{define "lint-style"}}
<style>
section.lint { margin: 0 0 22px; }
table.lint { border-collapse: collapse; font-size: 12.5px; margin: 6px 0; }
table.lint th, table.lint td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
table.lint thead th { background: #f3f5f7; }
.sev { display: inline-block; padding: 0 6px; border-radius: 3px; font-weight: bold; font-size: 11.5px; white-space: nowrap; }
.sev.sev-error { background: var(--fail); color: #fff; }
.sev.sev-warning { background: #ffe9a3; color: var(--unknown); }
.sev.sev-info { background: #e3ecf7; color: #1d4a80; }
tr.fails td { background: #fdf0ef; }
table.lint td.rule { white-space: nowrap; }
.lint .where { display: block; color: var(--muted); font-size: 11px; }
.lint .why { color: var(--muted); }
dl.rules dt { margin-top: 6px; }
dl.rules dd { margin: 2px 0 0 18px; color: var(--muted); }
</style>
{{- end}}{{define "lint"}}
<section class="lint" id="lint">
<h2>Lint: what the model reads</h2>
<p class="facts">{{.Headline}}{{with .FailOn}} · findings at or above <b>{{.}}</b> fail the run (shaded){{end}}</p>
{{- if .Rows}}
<table class="lint">
<thead><tr><th>tool</th><th>severity</th><th>rule</th><th>field</th><th>finding</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr class="{{.Class}}{{if .Fails}} fails{{end}}" data-tool="{{.Tool}}" data-rule="{{.Rule}}" data-severity="{{.Severity}}"><td>{{.Tool}}</td><td><span class="sev {{.Class}}">{{.Severity}}</span></td><td class="mono rule" title="{{.Why}}">{{.Rule}}</td><td class="mono">{{.Field}}{{with .Where}}<span class="where">{{.}}</span>{{end}}</td><td>{{.Message}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- with .Clean}}
<p class="caption">No findings: {{range $i, $t := .}}{{if $i}}, {{end}}{{$t}}{{end}}.</p>
{{- end}}
{{- range .Skipped}}
<p class="caption"><b>{{.Tool}}</b> was not linted: {{.Reason}}</p>
{{- end}}
{{- if .Rules}}
<h3>Why these rules</h3>
<dl class="rules">
{{- range .Rules}}
<dt><span class="sev {{.Class}}">{{.Severity}}</span> <code>{{.ID}}</code></dt><dd>{{.Why}}</dd>
{{- end}}
</dl>
{{- end}}
</section>
{{end}}`
