package report

import (
	"fmt"
	"strings"
)

// ProblemKind says what a [Problem] comes from.
type ProblemKind string

// The kinds of problems a report holds.
const (
	ProblemLint     ProblemKind = "lint"     // a lint finding
	ProblemScenario ProblemKind = "scenario" // a failed or inconclusive scenario
	ProblemBaseline ProblemKind = "baseline" // a baseline entry that passes now (stale)
	ProblemTool     ProblemKind = "tool"     // a tool that could not be certified
)

// Rule ids of the problems that are not a lint rule or a scenario.
const (
	RuleIDStaleBaseline = "stale-baseline"
	RuleIDNotCertified  = "not-certified"
)

// Problem is one thing a report says is wrong, at the place it is about:
// a lint finding, a failed or inconclusive scenario, a stale baseline
// entry, a tool that could not be certified. The formats that point into
// files (SARIF for code scanning, GitHub annotations) render these, so
// they say the same thing.
type Problem struct {
	Kind ProblemKind
	// RuleID is the lint rule's id, the scenario's id, RuleIDStaleBaseline
	// or RuleIDNotCertified.
	RuleID   string
	Severity Severity // error, warning or info
	Tool     string
	// Title is one line; Message says what happened (the violation and the
	// command that replays it); Help why it matters, when known.
	Title, Message, Help string
	// File and Line are where it points: the spec entry of the tool, or
	// the field a lint finding is about (Line 0 when unknown).
	File string
	Line int
	// Known is the reason a baseline gives for a known failure, which does
	// not fail the run ("" otherwise).
	Known string
}

// Problems lists the report's problems, tool by tool in report order: lint
// findings (worst first), then scenarios in order.
func (r *Report) Problems() []Problem {
	var out []Problem
	spec := ""
	if r.Run != nil {
		spec = r.Run.Spec
	}
	for _, t := range r.Tools {
		at := func(p Problem) Problem {
			p.Tool = t.Name
			if p.File == "" {
				p.File, p.Line = spec, t.Line
			}
			return p
		}
		if t.Error != "" {
			out = append(out, at(Problem{Kind: ProblemTool, RuleID: RuleIDNotCertified, Severity: SeverityError,
				Title: t.Name + ": not certified", Message: t.Error}))
		}
		if t.Lint != nil {
			fs := append([]Finding(nil), t.Lint.Findings...)
			sortFindings(fs, t.Lint.Checked)
			for _, f := range fs {
				out = append(out, at(Problem{Kind: ProblemLint, RuleID: f.Rule, Severity: f.Severity,
					Title:   fmt.Sprintf("%s: %s (%s)", t.Name, f.Rule, f.Field),
					Message: f.Message, Help: f.Explanation, File: f.File, Line: f.Line}))
			}
		}
		for _, s := range t.Scenarios {
			if p, ok := scenarioProblem(t.Name, s); ok {
				out = append(out, at(p))
			}
		}
	}
	return out
}

// scenarioProblem is the problem a scenario's verdict is, if any.
func scenarioProblem(tool string, s ScenarioReport) (Problem, bool) {
	cell := tool + " × " + s.ID
	p := Problem{Kind: ProblemScenario, RuleID: s.ID}
	switch {
	case s.Baseline == BaselineStale:
		p.Kind, p.RuleID, p.Severity = ProblemBaseline, RuleIDStaleBaseline, SeverityError
		p.Title = cell + ": stale baseline entry"
		p.Message = "the baseline lists " + cell + " as a known failure, but it passes now: remove the entry (the baseline only shrinks)"
		return p, true
	case s.Verdict == Fail:
		p.Severity = SeverityError
		p.Title = cell + " FAILED"
		var msg []string
		if c := s.Counterexample; c != nil {
			v := c.Violation
			if c.Rule != "" {
				v += " (" + string(c.Rule) + ")"
			}
			msg = append(msg, v)
			if c.Plan != "" {
				msg = append(msg, "plan: "+c.Plan)
			}
		} else if s.Reason != "" {
			msg = append(msg, s.Reason)
		}
		if s.Repro != "" {
			msg = append(msg, "replay: "+s.Repro)
		}
		p.Message = strings.Join(msg, "\n")
		if s.Baseline == BaselineKnown {
			p.Known = "a known failure the baseline lists"
		}
		return p, true
	case s.Verdict == Inconclusive:
		p.Severity = SeverityWarning
		p.Title = cell + " inconclusive"
		p.Message = s.Reason
		return p, true
	}
	return Problem{}, false
}
