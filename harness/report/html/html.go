package html

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/harness/report"
)

// WriteHTML writes r as one self-contained HTML page: no script, no fetched
// font, image or style sheet. It has a verdict matrix (tool × scenario) whose
// FAIL and UNKNOWN cells link to a section per failure with the violation, the
// plan, the replay command, the attempt log, the effects and an inline SVG
// timeline of the shrunk counterexample.
//
// The timeline has one lane per attempt: a bar from its start to its end on a
// shared time axis, the fault drawn where it struck, the response (or error)
// written after the bar; below the lanes, for each marker, the oracle's effect
// count as a step line with the wanted count as a dashed line and every step
// above it in red. The page's legend explains the marks. The output depends
// only on r.
func Write(w io.Writer, r *report.Report) error {
	return pageTemplate.Execute(w, buildPage(r))
}

// Geometry of a timeline picture, in SVG user units (= CSS px at scale 1).
const (
	width     = 1000.0
	plotX0    = 262.0 // left edge of the time axis; lane labels sit left of it
	plotX1    = 772.0 // right edge; response texts may run past it
	axisY     = 16.0  // baseline of the tick labels
	lanesTop  = 38.0
	laneH     = 30.0
	barH      = 14.0
	chartGap  = 26.0
	levelUnit = 22.0 // px per effect when the count stays small
	chartMaxH = 110.0
)

type page struct {
	// CSS is the page's style sheet.
	CSS       template.CSS
	Title     string
	Version   string
	Toxiproxy string
	Started   string
	NTools    int
	NReady    int
	NFail     int
	NUnknown  int
	Columns   []string
	Rows      []row
	Failures  []failure
	// LintOnly is set for the report of onceproof lint: no verdict matrix.
	LintOnly bool
	Lint     *lintSection // nil when no tool was linted
}

type row struct {
	Tool     string
	Contract string // the contract the tool was judged by, "" when unknown
	Ready    bool
	Error    string // shown across the row when the tool ran no scenario
	Note     string // an error next to scenarios that did run
	Duration string
	Cells    []cell
}

type cell struct {
	Ran    bool
	Word   string // PASS, FAIL or UNKNOWN
	Class  string // v-pass, v-fail or v-unknown
	Link   string // the failure section's id, "" for a pass
	Trials string // valid_trials/checks
	Title  string
}

type failure struct {
	ID       string
	Tool     string
	Scenario string
	Word     string
	Class    string
	Reason   string
	Checks   int
	Valid    int
	Seed     uint64
	Repro    string
	Baseline string
	CE       *counterexample
}

type counterexample struct {
	Plan      string
	Violation string
	Rule      string
	// Headers is set when an attempt recorded response headers: the
	// attempt table gets their column.
	Headers bool
	// Lookup is set when an attempt is a lookup: the table gets the
	// column of what each answered.
	Lookup   bool
	Attempts []attemptRow
	Effects  []effectRow
	Timeline timeline
}

type attemptRow struct {
	N        int
	Op       string
	FullOp   string
	Marker   string
	Fault    string
	Delay    string
	Start    string
	End      string
	Outcome  string
	Status   string
	ResultID string
	Effects  string
	Error    string
	Body     string
	FullBody string
	Headers  string
	Lookup   string
}

type effectRow struct {
	Marker string
	Count  int
	Want   int
	Class  string
	Word   string
}

func buildPage(r *report.Report) page {
	p := page{CSS: style(),
		Version:   or(r.Onceproof, "unknown"),
		Toxiproxy: or(r.Toxiproxy, "unknown"),
		Started:   "—",
		NTools:    len(r.Tools),
	}
	if !r.Started.IsZero() {
		p.Started = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	seen := map[string]bool{}
	for _, t := range r.Tools {
		if t.AgentReady {
			p.NReady++
		}
		for _, s := range t.Scenarios {
			if !seen[s.ID] {
				seen[s.ID] = true
				p.Columns = append(p.Columns, s.ID)
			}
		}
	}
	p.Title = fmt.Sprintf("onceproof report: %d of %s agent-ready", p.NReady, report.Plural(p.NTools, "tool"))
	p.LintOnly, p.Lint = r.Kind == report.KindLint, buildLint(r)
	if p.LintOnly {
		p.Title = "onceproof lint: " + r.LintHeadline()
	}

	ids := map[string]bool{}
	for _, t := range r.Tools {
		row := row{Tool: t.Name, Ready: t.AgentReady}
		if t.Contract != nil {
			row.Contract = t.Contract.Summary()
		}
		if t.Duration > 0 {
			row.Duration = report.Round(t.Duration)
		}
		if t.Error != "" && len(t.Scenarios) == 0 {
			row.Error = t.Error
		} else {
			row.Note = t.Error
		}
		links := make([]string, len(t.Scenarios))
		for i, s := range t.Scenarios {
			v := verdict(s)
			if v == report.Pass {
				continue
			}
			links[i] = uniqueID(ids, "fail-"+sanitize(t.Name)+"-"+sanitize(s.ID))
			if v == report.Fail {
				p.NFail++
			} else {
				p.NUnknown++
			}
			p.Failures = append(p.Failures, buildFailure(t, s, links[i]))
		}
		if row.Error == "" {
			for _, col := range p.Columns {
				i := slices.IndexFunc(t.Scenarios, func(s report.ScenarioReport) bool { return s.ID == col })
				if i < 0 {
					row.Cells = append(row.Cells, cell{})
					continue
				}
				s := t.Scenarios[i]
				word, class := word(verdict(s))
				row.Cells = append(row.Cells, cell{
					Ran:    true,
					Word:   word,
					Class:  class,
					Link:   links[i],
					Trials: trials(s),
					Title:  cellTitle(s),
				})
			}
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

func verdict(s report.ScenarioReport) report.Verdict {
	switch s.Verdict {
	case report.Pass, report.Fail, report.Inconclusive:
		return s.Verdict
	case "":
		if s.Passed {
			return report.Pass
		}
	}
	return report.Inconclusive
}

func word(v report.Verdict) (word, class string) {
	switch v {
	case report.Pass:
		return "PASS", "v-pass"
	case report.Fail:
		return "FAIL", "v-fail"
	}
	return "UNKNOWN", "v-unknown"
}

// trials is a cell's trial count, with the failure rate a pass rules out.
func trials(s report.ScenarioReport) string {
	t := fmt.Sprintf("%d/%d", s.ValidTrials, s.Checks)
	if s.RuledOut > 0 {
		t += " · rules out ≥" + report.Percent(s.RuledOut)
	}
	if s.LongestDelay > 0 {
		t += " · keys ≥" + report.Round(s.LongestDelay)
	}
	return t
}

func cellTitle(s report.ScenarioReport) string {
	t := fmt.Sprintf("%s of %s", report.Plural(s.ValidTrials, "valid trial"), report.Plural(s.Checks, "check"))
	if d := s.Depth(); d != "" {
		t += "; " + d
	}
	if h := s.Honoured(); h != "" {
		t += "; " + h
	}
	if s.Reason != "" {
		t += ": " + s.Reason
	}
	return t
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sanitize keeps an id to letters, digits, '-' and '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

// uniqueID returns id, or id with a numeric suffix when sanitizing made two
// ids collide.
func uniqueID(used map[string]bool, id string) string {
	out := id
	for n := 2; used[out]; n++ {
		out = fmt.Sprintf("%s-%d", id, n)
	}
	used[out] = true
	return out
}

func buildFailure(t report.ToolReport, s report.ScenarioReport, id string) failure {
	word, class := word(verdict(s))
	f := failure{
		ID:       id,
		Tool:     t.Name,
		Scenario: s.ID,
		Word:     word,
		Class:    class,
		Reason:   s.Reason,
		Checks:   s.Checks,
		Valid:    s.ValidTrials,
		Seed:     s.Seed,
		Repro:    s.Repro,
	}
	if c := s.Counterexample; c != nil {
		ce := &counterexample{Plan: c.Plan, Violation: c.Violation, Rule: string(c.Rule)}
		if ce.Violation == f.Reason {
			f.Reason = ""
		}
		for _, a := range c.Attempts {
			row := attemptRow{
				N:        a.N,
				Op:       report.ShortOp(a.Op),
				FullOp:   a.Op,
				Marker:   a.Marker,
				Fault:    report.Dash(a.Fault),
				Delay:    report.Round(a.Delay),
				Start:    report.Round(a.Start),
				End:      report.Round(a.End),
				Outcome:  report.Dash(string(a.Outcome)),
				Status:   report.DashInt(a.Status),
				ResultID: report.Dash(a.ResultID),
				Effects:  report.Counts(a.Before, a.After),
				Error:    a.Error,
				FullBody: a.Body,
				Body:     trunc(a.Body, 60),
				Headers:  a.HeaderText(),
				Lookup:   report.Dash(string(a.Lookup)),
			}
			ce.Lookup = ce.Lookup || a.Lookup != ""
			ce.Headers = ce.Headers || row.Headers != "" && c.Rule.AboutAnswers()
			ce.Attempts = append(ce.Attempts, row)
		}
		for _, e := range c.Effects {
			row := effectRow{Marker: e.Marker, Count: e.Count, Want: e.Want, Class: "ok", Word: "as wanted"}
			switch {
			case e.Count > e.Want:
				row.Class, row.Word = "over", fmt.Sprintf("%d too many", e.Count-e.Want)
			case e.Count < e.Want:
				row.Class, row.Word = "under", fmt.Sprintf("%d missing", e.Want-e.Count)
			}
			ce.Effects = append(ce.Effects, row)
		}
		replayed := ""
		if t.Contract != nil {
			replayed = t.Contract.ReplayedHeader
		}
		ce.Timeline = buildTimeline(c, replayed)
		f.CE = ce
	}
	return f
}

// assets are the page's template and style sheet.
//
//go:embed page.html.tmpl lint.html.tmpl style.css
var assets embed.FS

// pageTemplate is the page, parsed once; it is never modified.
var pageTemplate = template.Must(template.New("page.html.tmpl").Funcs(template.FuncMap{
	"px":  px,
	"add": func(a, b float64) float64 { return a + b },
}).ParseFS(assets, "page.html.tmpl", "lint.html.tmpl"))

// style is the page's style sheet.
func style() template.CSS {
	b, err := assets.ReadFile("style.css")
	if err != nil {
		panic("html: " + err.Error())
	}
	return template.CSS(b)
}
