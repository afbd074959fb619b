package report

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes r as a compact verdict table plus each failure's
// shrunk counterexample, fit for a pull request or a CI job summary.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if r.Kind == KindLint {
		writeLintMarkdown(&b, r, fmt.Sprintf("## onceproof lint: %s\n\n", r.LintHeadline()))
		_, err := io.WriteString(w, b.String())
		return err
	}
	ready := 0
	for _, t := range r.Tools {
		if t.AgentReady {
			ready++
		}
	}
	fmt.Fprintf(&b, "## onceproof: %d of %s agent-ready\n\n", ready, Plural(len(r.Tools), "tool"))
	ids := r.ScenarioIDs()
	b.WriteString("| tool |")
	for _, id := range ids {
		fmt.Fprintf(&b, " %s |", id)
	}
	b.WriteString(" agent-ready |\n|---|")
	for range ids {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, t := range r.Tools {
		fmt.Fprintf(&b, "| %s |", mdEscape(t.Name))
		if t.Error != "" {
			for range ids {
				b.WriteString(" ⚠️ error |")
			}
		} else {
			for _, id := range ids {
				sc, ok := t.Scenario(id)
				if !ok {
					b.WriteString(" — |")
					continue
				}
				fmt.Fprintf(&b, " %s |", mdCell(sc))
			}
		}
		yes := "no"
		if t.AgentReady {
			yes = "**yes**"
		}
		fmt.Fprintf(&b, " %s |\n", yes)
	}
	contracts := false
	for _, t := range r.Tools {
		if t.Contract == nil {
			continue
		}
		if !contracts {
			b.WriteString("\nContracts judged by:\n\n")
			contracts = true
		}
		fmt.Fprintf(&b, "- **%s**: %s\n", mdEscape(t.Name), mdEscape(t.Contract.Summary()))
	}
	for _, t := range r.Tools {
		if t.Error != "" {
			fmt.Fprintf(&b, "\n**%s** could not be certified: %s\n", mdEscape(t.Name), mdEscape(firstLine(t.Error)))
		}
		for _, sc := range t.Scenarios {
			if sc.Verdict == Pass && sc.Baseline != BaselineStale {
				continue
			}
			rule := ""
			if sc.Counterexample != nil && sc.Counterexample.Rule != "" && sc.Verdict == Fail {
				rule = " <code>" + htmlText(string(sc.Counterexample.Rule)) + "</code>"
			}
			fmt.Fprintf(&b, "\n<details><summary><b>%s × %s</b>%s: %s</summary>\n\n", htmlText(t.Name), htmlText(sc.ID), rule, htmlText(firstLine(summaryLine(sc))))
			if sc.Counterexample != nil {
				fmt.Fprintf(&b, "```\n%s```\n", sc.Counterexample.String())
			}
			if sc.Repro != "" {
				fmt.Fprintf(&b, "\nReplay: `%s`\n", sc.Repro)
			}
			b.WriteString("\n</details>\n")
		}
	}
	writeLintMarkdown(&b, r, fmt.Sprintf("\n### Lint: %s\n\n", r.LintHeadline()))
	_, err := io.WriteString(w, b.String())
	return err
}

func summaryLine(sc ScenarioReport) string {
	switch {
	case sc.Baseline == BaselineStale:
		return "stale baseline entry: it passes now, remove it"
	case sc.Baseline == BaselineKnown:
		return "known failure (baseline): " + sc.Reason
	case sc.Verdict == Inconclusive:
		return "inconclusive: " + sc.Reason
	}
	return sc.Reason
}

func mdCell(sc ScenarioReport) string {
	switch {
	case sc.Baseline == BaselineStale:
		return "⚠️ STALE"
	case sc.Verdict == Pass && sc.LongestDelay > 0:
		return fmt.Sprintf("✅ PASS %d/%d (rules out ≥%s; keys ≥%s)", sc.ValidTrials, sc.Checks, Percent(sc.RuledOut), Round(sc.LongestDelay))
	case sc.Verdict == Pass:
		return fmt.Sprintf("✅ PASS %d/%d (rules out ≥%s)", sc.ValidTrials, sc.Checks, Percent(sc.RuledOut))
	case sc.Verdict == Fail && sc.Baseline == BaselineKnown:
		return "☑️ known FAIL"
	case sc.Verdict == Fail:
		return "❌ FAIL"
	}
	return "❔ UNKNOWN"
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// ScenarioIDs is the union of the tools' scenario ids in first-seen order.
func (r *Report) ScenarioIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for _, t := range r.Tools {
		for _, s := range t.Scenarios {
			if !seen[s.ID] {
				seen[s.ID] = true
				ids = append(ids, s.ID)
			}
		}
	}
	return ids
}

// Scenario returns the report of scenario id, if it ran.
func (t ToolReport) Scenario(id string) (ScenarioReport, bool) {
	for _, s := range t.Scenarios {
		if s.ID == id {
			return s, true
		}
	}
	return ScenarioReport{}, false
}
