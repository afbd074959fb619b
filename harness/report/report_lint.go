package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// KindLint marks the report of onceproof lint: every tool has a lint result
// and no scenarios.
const KindLint = "lint"

// LintFindings returns every tool's lint findings, sorted worst first.
func (r *Report) LintFindings() []Finding {
	var out []Finding
	for _, t := range r.Tools {
		if t.Lint != nil {
			out = append(out, t.Lint.Findings...)
		}
	}
	sortFindings(out, r.ruleOrder())
	return out
}

// LintFailing returns the findings that reach their tool's fail-on
// threshold.
func (r *Report) LintFailing() []Finding {
	var out []Finding
	for _, t := range r.Tools {
		if t.Lint != nil {
			out = append(out, t.Lint.Failing()...)
		}
	}
	sortFindings(out, r.ruleOrder())
	return out
}

// lintFailOn is the threshold of the report's lint results ("" when none
// ran).
func (r *Report) lintFailOn() Severity {
	for _, t := range r.Tools {
		if t.Lint != nil && t.Lint.FailOn != "" {
			return t.Lint.FailOn
		}
	}
	return ""
}

// LintHeadline sums up a lint: "6 errors, 3 warnings in 5 of 9 tools".
func (r *Report) LintHeadline() string {
	fs := r.LintFindings()
	if len(fs) == 0 {
		return fmt.Sprintf("no findings in %s", Plural(len(r.Tools), "tool"))
	}
	tools := map[string]bool{}
	for _, t := range r.Tools {
		if t.Lint != nil && len(t.Lint.Findings) > 0 {
			tools[t.Name] = true
		}
	}
	return fmt.Sprintf("%s in %d of %s", Summary(fs), len(tools), Plural(len(r.Tools), "tool"))
}

// severityColor is the ANSI colour of a severity.
func severityColor(s Severity) string {
	switch s {
	case SeverityError:
		return ansiRed + ansiBold
	case SeverityWarning:
		return ansiYellow
	}
	return ansiDim
}

// writeLintReportText writes the report of onceproof lint: per tool its
// findings with their explanation, then the headline.
func writeLintReportText(b *strings.Builder, r *Report, paint func(code, s string) string) {
	for _, t := range r.Tools {
		switch {
		case t.Lint == nil:
			fmt.Fprintf(b, "%s: not linted\n", t.Name)
			continue
		case t.Lint.Skipped != "":
			fmt.Fprintf(b, "%s: not linted: %s\n", t.Name, t.Lint.Skipped)
			continue
		case len(t.Lint.Findings) == 0:
			fmt.Fprintf(b, "%s: %s (%s checked)\n", t.Name, paint(ansiGreen, "no findings"), Plural(len(t.Lint.Checked), "rule"))
			continue
		}
		fmt.Fprintf(b, "%s: %s\n", t.Name, Summary(t.Lint.Findings))
		fs := append([]Finding(nil), t.Lint.Findings...)
		sortFindings(fs, t.Lint.Checked)
		for _, f := range fs {
			where := ""
			if f.Where != "" {
				where = " (" + f.Where + ")"
			}
			fmt.Fprintf(b, "  %s %s  %s%s\n", paint(severityColor(f.Severity), fmt.Sprintf("%-7s", f.Severity)), f.Rule, f.Field, where)
			fmt.Fprintf(b, "          %s\n", f.Message)
			fmt.Fprintf(b, "          %s\n", paint(ansiDim, "why: "+f.Explanation))
		}
	}
	fmt.Fprintf(b, "lint: %s", r.LintHeadline())
	if on := r.lintFailOn(); on != "" && on != SeverityNever && len(r.LintFindings()) > 0 {
		fmt.Fprintf(b, "; %d at or above --fail-on %s", len(r.LintFailing()), on)
	}
	b.WriteString("\n")
}

// writeToolLintText writes a certified tool's lint findings, one line each.
func writeToolLintText(b *strings.Builder, res *LintResult, paint func(code, s string) string) {
	if res == nil {
		return
	}
	if res.Skipped != "" {
		fmt.Fprintf(b, "  lint: not run: %s\n", res.Skipped)
		return
	}
	fs := append([]Finding(nil), res.Findings...)
	sortFindings(fs, res.Checked)
	for _, f := range fs {
		fmt.Fprintf(b, "  lint %s %s %s: %s\n", paint(severityColor(f.Severity), string(f.Severity)), f.Rule, f.Field, f.Message)
	}
}

// severityIcon marks a severity in Markdown.
func severityIcon(s Severity) string {
	switch s {
	case SeverityError:
		return "🛑 error"
	case SeverityWarning:
		return "⚠️ warning"
	}
	return "ℹ️ info"
}

// writeLintMarkdown writes the findings as a table with the explanations of
// the rules that fired; heading is the line above the table.
func writeLintMarkdown(b *strings.Builder, r *Report, heading string) {
	fs := r.LintFindings()
	var skipped []string
	for _, t := range r.Tools {
		if t.Lint != nil && t.Lint.Skipped != "" {
			skipped = append(skipped, fmt.Sprintf("**%s** was not linted: %s", mdEscape(t.Name), mdEscape(t.Lint.Skipped)))
		}
	}
	if len(fs) == 0 && len(skipped) == 0 && r.Kind != KindLint {
		return
	}
	b.WriteString(heading)
	if len(fs) > 0 {
		b.WriteString("| tool | severity | rule | field | finding |\n|---|---|---|---|---|\n")
		for _, f := range fs {
			fmt.Fprintf(b, "| %s | %s | `%s` | `%s` | %s |\n", mdEscape(f.Tool), severityIcon(f.Severity), f.Rule, mdEscape(f.Field), mdEscape(f.Message))
		}
	}
	var clean []string
	for _, t := range r.Tools {
		if t.Lint != nil && t.Lint.Skipped == "" && len(t.Lint.Findings) == 0 {
			clean = append(clean, mdEscape(t.Name))
		}
	}
	if len(clean) > 0 && r.Kind == KindLint {
		fmt.Fprintf(b, "\nNo findings: %s.\n", strings.Join(clean, ", "))
	}
	for _, s := range skipped {
		fmt.Fprintf(b, "\n%s\n", s)
	}
	seen := map[string]bool{}
	var why []string
	for _, f := range fs {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			why = append(why, fmt.Sprintf("- **`%s`** (%s): %s", f.Rule, f.Severity, mdEscape(f.Explanation)))
		}
	}
	if len(why) > 0 {
		fmt.Fprintf(b, "\n<details><summary>Why these rules</summary>\n\n%s\n\n</details>\n", strings.Join(why, "\n"))
	}
}

// lintJUnitCases returns a testcase per rule the lint checked for tool t: a
// failure when one of the rule's findings reaches the fail-on threshold, the
// findings in system-out otherwise. A skipped lint is one skipped case.
func lintJUnitCases(t ToolReport) (cases []junitCase, failures int) {
	if t.Lint == nil {
		return nil, 0
	}
	class := "onceproof.lint." + t.Name
	if t.Lint.Skipped != "" {
		return []junitCase{{Name: "lint", Classname: class, Time: "0", Skipped: &junitSkipped{Message: t.Lint.Skipped}}}, 0
	}
	for _, id := range t.Lint.Checked {
		c := junitCase{Name: "lint: " + id, Classname: class, Time: "0"}
		var lines []string
		var failing []Finding
		for _, f := range t.Lint.Findings {
			if f.Rule != id {
				continue
			}
			lines = append(lines, f.String())
			if f.Severity.Reaches(t.Lint.FailOn) {
				failing = append(failing, f)
			}
		}
		if len(failing) > 0 {
			c.Failure = &junitProblem{Message: failing[0].Message, Type: id,
				Body: strings.Join(lines, "\n") + "\nwhy: " + failing[0].Explanation + "\n"}
			failures++
		} else if len(lines) > 0 {
			c.SystemOut = strings.Join(lines, "\n")
		}
		cases = append(cases, c)
	}
	return cases, failures
}

// ruleOrder is the order of the lint rules the report's tools were checked
// by (each tool's Checked is in the rule table's order).
func (r *Report) ruleOrder() []string {
	var order []string
	for _, t := range r.Tools {
		if t.Lint == nil {
			continue
		}
		for _, id := range t.Lint.Checked {
			if !slices.Contains(order, id) {
				order = append(order, id)
			}
		}
	}
	return order
}

// sortFindings orders findings by severity (worst first), then tool, rule
// (in order) and field.
func sortFindings(fs []Finding, order []string) {
	index := func(rule string) int {
		if i := slices.Index(order, rule); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(b.Severity.Rank()-a.Severity.Rank(), cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(index(a.Rule), index(b.Rule)), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Field, b.Field))
	})
}
