package harness

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
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
func (r *Report) WriteHTML(w io.Writer) error {
	return rhTemplate.Execute(w, rhBuildPage(r))
}

// Geometry of a timeline picture, in SVG user units (= CSS px at scale 1).
const (
	rhWidth     = 1000.0
	rhPlotX0    = 262.0 // left edge of the time axis; lane labels sit left of it
	rhPlotX1    = 772.0 // right edge; response texts may run past it
	rhAxisY     = 16.0  // baseline of the tick labels
	rhLanesTop  = 38.0
	rhLaneH     = 30.0
	rhBarH      = 14.0
	rhChartGap  = 26.0
	rhLevelUnit = 22.0 // px per effect when the count stays small
	rhChartMaxH = 110.0
)

type rhPage struct {
	Title     string
	Version   string
	Toxiproxy string
	Started   string
	NTools    int
	NReady    int
	NFail     int
	NUnknown  int
	Columns   []string
	Rows      []rhRow
	Failures  []rhFailure
	// LintOnly is set for the report of onceproof lint: no verdict matrix.
	LintOnly bool
	Lint     *rhLint // nil when no tool was linted
}

type rhRow struct {
	Tool     string
	Contract string // the contract the tool was judged by, "" when unknown
	Ready    bool
	Error    string // shown across the row when the tool ran no scenario
	Note     string // an error next to scenarios that did run
	Duration string
	Cells    []rhCell
}

type rhCell struct {
	Ran    bool
	Word   string // PASS, FAIL or UNKNOWN
	Class  string // v-pass, v-fail or v-unknown
	Link   string // the failure section's id, "" for a pass
	Trials string // valid_trials/checks
	Title  string
}

type rhFailure struct {
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
	CE       *rhCounterexample
}

type rhCounterexample struct {
	Plan      string
	Violation string
	Rule      string
	// Headers is set when an attempt recorded response headers: the
	// attempt table gets their column.
	Headers  bool
	Attempts []rhAttemptRow
	Effects  []rhEffectRow
	Timeline rhTimeline
}

type rhAttemptRow struct {
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
}

type rhEffectRow struct {
	Marker string
	Count  int
	Want   int
	Class  string
	Word   string
}

type rhTimeline struct {
	Width, Height float64
	PlotX0        float64
	PlotX1        float64
	AxisY         float64
	LanesTop      float64
	LanesBottom   float64
	AxisMaxMs     string
	Ticks         []rhTick
	Bands         []rhBand
	Lanes         []rhLane
	Charts        []rhChart
	Legend        []rhLegend
	Desc          string
}

type rhTick struct {
	X     float64
	Label string
}

// rhBand shades a stretch of time in which several attempts were in flight.
type rhBand struct {
	X, W, Y, H float64
	LabelX     float64
	LabelY     float64
	Label      string
}

type rhGlyph struct {
	Kind string // cross, bolt, hold, dep, crash, other
	X, Y float64
}

type rhLane struct {
	N         int
	Y         float64 // centre line
	Label     string
	FullLabel string
	BarX      float64
	BarY      float64
	BarW      float64
	BarH      float64
	BarClass  string
	StartMs   string
	EndMs     string
	Status    int
	ResultID  string
	Outcome   string
	Fault     string
	Glyph     *rhGlyph
	Result    string
	ResultX   float64
	ResultCls string
	Title     string
}

type rhChart struct {
	Marker  string
	Label   string
	Top     float64
	Bottom  float64
	HasWant bool
	Want    int
	WantY   float64
	Final   int
	Max     int
	Levels  []rhLevel
	Segs    []rhSeg
	Note    *rhNote
	Guide   *rhSeg
	End     rhNote
	LabelY  float64
	MarkerY float64
}

type rhLevel struct {
	Y     float64
	Label string
}

type rhSeg struct {
	X1, Y1, X2, Y2 float64
	Class          string
	Count          int
	Inferred       bool
}

type rhNote struct {
	X, Y   float64
	Text   string
	Class  string
	Anchor string // text-anchor: start or end
}

type rhLegend struct {
	Kind   string // glyph, bar, band or line
	Glyph  *rhGlyph
	Swatch string // CSS class of the bar or line sample
	Text   string
}

func rhBuildPage(r *Report) rhPage {
	p := rhPage{
		Version:   rhOr(r.Onceproof, "unknown"),
		Toxiproxy: rhOr(r.Toxiproxy, "unknown"),
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
	p.Title = fmt.Sprintf("onceproof report: %d of %s agent-ready", p.NReady, Plural(p.NTools, "tool"))
	p.LintOnly, p.Lint = r.Kind == KindLint, rhBuildLint(r)
	if p.LintOnly {
		p.Title = "onceproof lint: " + r.lintHeadline()
	}

	ids := map[string]bool{}
	for _, t := range r.Tools {
		row := rhRow{Tool: t.Name, Ready: t.AgentReady}
		if t.Contract != nil {
			row.Contract = t.Contract.Summary()
		}
		if t.Duration > 0 {
			row.Duration = round(t.Duration)
		}
		if t.Error != "" && len(t.Scenarios) == 0 {
			row.Error = t.Error
		} else {
			row.Note = t.Error
		}
		links := make([]string, len(t.Scenarios))
		for i, s := range t.Scenarios {
			v := rhVerdict(s)
			if v == Pass {
				continue
			}
			links[i] = rhUniqueID(ids, "fail-"+rhSanitize(t.Name)+"-"+rhSanitize(s.ID))
			if v == Fail {
				p.NFail++
			} else {
				p.NUnknown++
			}
			p.Failures = append(p.Failures, rhBuildFailure(t, s, links[i]))
		}
		if row.Error == "" {
			for _, col := range p.Columns {
				i := slices.IndexFunc(t.Scenarios, func(s ScenarioReport) bool { return s.ID == col })
				if i < 0 {
					row.Cells = append(row.Cells, rhCell{})
					continue
				}
				s := t.Scenarios[i]
				word, class := rhWord(rhVerdict(s))
				row.Cells = append(row.Cells, rhCell{
					Ran:    true,
					Word:   word,
					Class:  class,
					Link:   links[i],
					Trials: rhTrials(s),
					Title:  rhCellTitle(s),
				})
			}
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

func rhVerdict(s ScenarioReport) Verdict {
	switch s.Verdict {
	case Pass, Fail, Inconclusive:
		return s.Verdict
	case "":
		if s.Passed {
			return Pass
		}
	}
	return Inconclusive
}

func rhWord(v Verdict) (word, class string) {
	switch v {
	case Pass:
		return "PASS", "v-pass"
	case Fail:
		return "FAIL", "v-fail"
	}
	return "UNKNOWN", "v-unknown"
}

// rhTrials is a cell's trial count, with the failure rate a pass rules out.
func rhTrials(s ScenarioReport) string {
	t := fmt.Sprintf("%d/%d", s.ValidTrials, s.Checks)
	if s.RuledOut > 0 {
		t += " · rules out ≥" + Percent(s.RuledOut)
	}
	if s.LongestDelay > 0 {
		t += " · keys ≥" + round(s.LongestDelay)
	}
	return t
}

func rhCellTitle(s ScenarioReport) string {
	t := fmt.Sprintf("%s of %s", Plural(s.ValidTrials, "valid trial"), Plural(s.Checks, "check"))
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

func rhOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rhSanitize keeps an id to letters, digits, '-' and '_'.
func rhSanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

// rhUniqueID returns id, or id with a numeric suffix when sanitizing made two
// ids collide.
func rhUniqueID(used map[string]bool, id string) string {
	out := id
	for n := 2; used[out]; n++ {
		out = fmt.Sprintf("%s-%d", id, n)
	}
	used[out] = true
	return out
}

func rhBuildFailure(t ToolReport, s ScenarioReport, id string) rhFailure {
	word, class := rhWord(rhVerdict(s))
	f := rhFailure{
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
		ce := &rhCounterexample{Plan: c.Plan, Violation: c.Violation, Rule: string(c.Rule)}
		if ce.Violation == f.Reason {
			f.Reason = ""
		}
		for _, a := range c.Attempts {
			row := rhAttemptRow{
				N:        a.N,
				Op:       shortOp(a.Op),
				FullOp:   a.Op,
				Marker:   a.Marker,
				Fault:    dash(a.Fault),
				Delay:    round(a.Delay),
				Start:    round(a.Start),
				End:      round(a.End),
				Outcome:  dash(string(a.Outcome)),
				Status:   dashInt(a.Status),
				ResultID: dash(a.ResultID),
				Effects:  counts(a.Before, a.After),
				Error:    a.Error,
				FullBody: a.Body,
				Body:     rhTrunc(a.Body, 60),
				Headers:  a.headerText(),
			}
			ce.Headers = ce.Headers || row.Headers != "" && c.Rule.AboutAnswers()
			ce.Attempts = append(ce.Attempts, row)
		}
		for _, e := range c.Effects {
			row := rhEffectRow{Marker: e.Marker, Count: e.Count, Want: e.Want, Class: "ok", Word: "as wanted"}
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
		ce.Timeline = rhBuildTimeline(c, replayed)
		f.CE = ce
	}
	return f
}

// rhTrunc shortens s to n runes with an ellipsis.
func rhTrunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func rhRound(v float64) float64 { return math.Round(v*10) / 10 }

// rhBuildTimeline draws c; an answer that carries the replayed header (""
// for none) is labelled a replay.
func rhBuildTimeline(c *Counterexample, replayed string) rhTimeline {
	tl := rhTimeline{Width: rhWidth, PlotX0: rhPlotX0, PlotX1: rhPlotX1, AxisY: rhAxisY, LanesTop: rhLanesTop}

	var maxNs time.Duration
	for _, a := range c.Attempts {
		maxNs = max(maxNs, a.Start, a.End)
	}
	maxMs := float64(maxNs) / 1e6
	step := rhNiceStep(maxMs)
	nTicks := max(1, int(math.Ceil(maxMs/step-1e-9)))
	axisMax := float64(nTicks) * step
	tl.AxisMaxMs = rhFormatMs(axisMax, step)
	x := func(d time.Duration) float64 {
		return rhRound(rhPlotX0 + float64(d)/1e6/axisMax*(rhPlotX1-rhPlotX0))
	}
	for i := 0; i <= nTicks; i++ {
		label := rhFormatMs(float64(i)*step, step)
		if i == 0 || i == nTicks {
			label += " ms"
		}
		tl.Ticks = append(tl.Ticks, rhTick{X: rhRound(rhPlotX0 + float64(i)/float64(nTicks)*(rhPlotX1-rhPlotX0)), Label: label})
	}

	used := map[string]bool{}
	markers := rhMarkers(c)
	for i, a := range c.Attempts {
		y := rhLanesTop + rhLaneH*float64(i) + rhLaneH/2
		ln := rhLane{
			N:        a.N,
			Y:        y,
			BarX:     x(a.Start),
			BarY:     y - rhBarH/2,
			BarH:     rhBarH,
			StartMs:  strconv.FormatFloat(float64(a.Start)/1e6, 'f', 3, 64),
			EndMs:    strconv.FormatFloat(float64(a.End)/1e6, 'f', 3, 64),
			Status:   a.Status,
			ResultID: a.ResultID,
			Outcome:  string(a.Outcome),
			Fault:    a.Fault,
		}
		ln.BarW = max(rhRound(x(a.End)-ln.BarX), 2)
		ln.FullLabel = fmt.Sprintf("#%d %s", a.N, shortOp(a.Op))
		if note := a.laneNote(); note != "" {
			ln.FullLabel += " " + note
		}
		if len(markers) > 1 && a.Marker != "" {
			// Say which chart below the attempt counts towards.
			ln.FullLabel += " " + rhShortMarker(a.Marker)
		}
		if a.Fault != "" {
			ln.FullLabel += " " + a.Fault
		}
		ln.Label = rhTrunc(ln.FullLabel, 38)
		ln.BarClass, ln.Result, ln.ResultCls = rhBarLook(a)
		if replayed != "" && a.Headers[replayed] != "" {
			ln.Result += " · replayed"
		}
		used[ln.BarClass] = true
		end := ln.BarX + ln.BarW
		ln.ResultX = end + 6
		if kind, at := rhFaultGlyph(a.Fault); kind != "" {
			gx := ln.BarX
			switch at {
			case "end":
				gx = end
				ln.ResultX = end + 12
			case "mid":
				gx = rhRound(ln.BarX + ln.BarW/2)
			case "before":
				gx = ln.BarX - 6
			}
			ln.Glyph = &rhGlyph{Kind: kind, X: gx, Y: y}
			used["glyph-"+kind] = true
		}
		ln.Title = fmt.Sprintf("attempt %d: %s → %s ms, %s", a.N, ln.StartMs, ln.EndMs, rhOr(ln.Result, "no result"))
		if a.Error != "" {
			ln.Title += " (" + a.Error + ")"
		}
		if h := a.headerText(); h != "" {
			ln.Title += "; headers " + h
		}
		tl.Lanes = append(tl.Lanes, ln)
	}
	tl.LanesBottom = rhLanesTop + rhLaneH*float64(len(c.Attempts))

	for _, b := range rhOverlaps(c.Attempts) {
		band := rhBand{X: x(b.from), Y: rhLanesTop - 12, Label: fmt.Sprintf("%d in flight", b.n)}
		band.W = max(rhRound(x(b.to)-band.X), 1)
		band.H = tl.LanesBottom - band.Y
		band.LabelX, band.LabelY = band.X+3, rhLanesTop-3
		tl.Bands = append(tl.Bands, band)
	}
	if len(tl.Bands) > 0 {
		used["band"] = true
	}

	top := tl.LanesBottom + rhChartGap
	for _, m := range markers {
		ch := rhBuildChart(c, m, top, x, maxNs)
		if ch.Note != nil {
			used["over"] = true
		}
		for _, s := range ch.Segs {
			if s.Inferred {
				used["inferred"] = true
			}
		}
		if ch.HasWant && ch.Final < ch.Want {
			used["under"] = true
		}
		tl.Charts = append(tl.Charts, ch)
		top = ch.Bottom + rhChartGap
	}
	tl.Height = top
	tl.Legend = rhBuildLegend(used)
	tl.Desc = rhDescribe(c)
	return tl
}

// rhNiceStep picks a tick step of 1, 2, 2.5 or 5 times a power of ten giving
// about six ticks over maxMs.
func rhNiceStep(maxMs float64) float64 {
	if maxMs <= 0 {
		maxMs = 1
	}
	raw := maxMs / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if raw <= m*mag*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

func rhFormatMs(v, step float64) string {
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9))) + 1
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// rhBarLook returns the bar's CSS class and the text written after it.
func rhBarLook(a Attempt) (class, result, resultClass string) {
	switch a.Outcome {
	case OK:
		result = strconv.Itoa(a.Status)
		if a.ResultID != "" {
			result += " " + a.ResultID
		}
		if a.Status/100 == 2 {
			return "bar-2xx", result, "res-2xx"
		}
		return "bar-other", result, "res-other"
	case Failed:
		return "bar-failed", "failed: " + rhShortErr(a.Error), "res-failed"
	case Unknown:
		return "bar-unknown", "unknown: " + rhShortErr(a.Error), "res-unknown"
	}
	if rhIsCrash(a.Fault) {
		res := "restarted"
		if a.After >= 0 {
			res = fmt.Sprintf("restarted, %d survived", a.After)
		}
		return "bar-crash", res, "res-other"
	}
	return "bar-unknown", rhOr(string(a.Outcome), "?"), "res-unknown"
}

// rhShortErr keeps the gist of an error: "read response: unexpected EOF" →
// "EOF", "dial: …: connect: connection refused" → "refused".
func rhShortErr(e string) string {
	if e == "" {
		return "no response"
	}
	low := strings.ToLower(e)
	switch {
	case strings.Contains(low, "timeout"), strings.Contains(low, "deadline exceeded"):
		return "timeout"
	case strings.Contains(low, "connection refused"):
		return "refused"
	case strings.Contains(low, "connection reset"):
		return "reset"
	case strings.Contains(low, "broken pipe"):
		return "broken pipe"
	case strings.HasSuffix(low, "eof"):
		return "EOF"
	}
	if i := strings.LastIndex(e, ": "); i >= 0 {
		e = e[i+2:]
	}
	return rhTrunc(e, 28)
}

func rhIsCrash(fault string) bool {
	return strings.Contains(fault, "killed") || strings.Contains(fault, "crash")
}

// rhFaultGlyph says which mark a fault gets and where on the bar: request
// faults at its start, lost responses and timeouts at its end, dependency
// faults in its middle.
func rhFaultGlyph(fault string) (kind, at string) {
	switch {
	case fault == "":
		return "", ""
	case strings.HasPrefix(fault, "fail-before-server"), strings.HasPrefix(fault, "torn-request"):
		return "cross", "start"
	case strings.HasPrefix(fault, "lose-response"), strings.Contains(fault, "timeout"):
		return "bolt", "end"
	case strings.HasPrefix(fault, "hold"):
		return "hold", "before"
	case strings.HasPrefix(fault, "cut-connection"), strings.HasPrefix(fault, "reset-connection"):
		return "dep", "mid"
	case rhIsCrash(fault):
		return "crash", "start"
	}
	return "other", "start"
}

type rhInterval struct {
	from, to time.Duration
	n        int
}

// rhOverlaps returns the stretches in which two or more attempts were in
// flight, each with the most attempts in flight during it.
func rhOverlaps(as []Attempt) []rhInterval {
	type ev struct {
		t time.Duration
		d int
	}
	var evs []ev
	for _, a := range as {
		if a.End > a.Start {
			evs = append(evs, ev{a.Start, +1}, ev{a.End, -1})
		}
	}
	// Ends sort before starts at the same instant: touching is not overlapping.
	slices.SortStableFunc(evs, func(a, b ev) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d))
	})
	var out []rhInterval
	n := 0
	var cur *rhInterval
	for _, e := range evs {
		n += e.d
		switch {
		case n >= 2 && cur == nil:
			cur = &rhInterval{from: e.t, n: n}
		case n >= 2:
			cur.n = max(cur.n, n)
		case n < 2 && cur != nil:
			cur.to = e.t
			out = append(out, *cur)
			cur = nil
		}
	}
	return out
}

// rhMarkers lists the markers to chart: the effects' in order, then any
// other marker the attempts carry.
func rhMarkers(c *Counterexample) []string {
	var ms []string
	for _, e := range c.Effects {
		if !slices.Contains(ms, e.Marker) {
			ms = append(ms, e.Marker)
		}
	}
	for _, a := range c.Attempts {
		if a.Marker != "" && !slices.Contains(ms, a.Marker) {
			ms = append(ms, a.Marker)
		}
	}
	if len(ms) == 0 && len(c.Attempts) > 0 {
		ms = append(ms, "")
	}
	return ms
}

// rhOfMarker reports whether attempt a counts towards marker m; an attempt
// without a marker belongs to the only marker there is.
func rhOfMarker(a Attempt, m string, markers int) bool {
	return a.Marker == m || a.Marker == "" && markers == 1
}

type rhPoint struct {
	t time.Duration
	v int
}

type rhStep struct {
	t        time.Duration
	v        int
	inferred bool
}

// rhSteps reconstructs the oracle's count for marker m over time. The count is
// 0 when the trial starts (markers are fresh), Before at the start and After at
// the end of an attempt when they were taken, and the final effect count
// after the last attempt. Between two readings that differ, the change is
// put at the end of the unread (overlapping) attempts that most likely made
// it, 2xx answers with a result id not seen before first; those steps are
// inferred. A change no unread attempt explains is put at the later reading.
func rhSteps(c *Counterexample, m string, final *Effect, endNs time.Duration) []rhStep {
	nm := len(rhMarkers(c))
	var mine []Attempt
	for _, a := range c.Attempts {
		if rhOfMarker(a, m, nm) {
			mine = append(mine, a)
		}
	}
	pts := []rhPoint{{0, 0}}
	for _, a := range mine {
		if a.Before >= 0 {
			pts = append(pts, rhPoint{a.Start, a.Before})
		}
		if a.After >= 0 {
			pts = append(pts, rhPoint{a.End, a.After})
		}
	}
	if final != nil {
		pts = append(pts, rhPoint{endNs, final.Count})
	}
	slices.SortStableFunc(pts, func(a, b rhPoint) int { return cmp.Compare(a.t, b.t) })

	// A 2xx answer is new when no attempt that ended earlier had its result id.
	byEnd := slices.Clone(mine)
	slices.SortStableFunc(byEnd, func(a, b Attempt) int { return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.N, b.N)) })
	fresh := map[int]bool{}
	ids := map[string]bool{}
	for _, a := range byEnd {
		if a.Outcome == OK && a.Status/100 == 2 && a.ResultID != "" && !ids[a.ResultID] {
			fresh[a.N] = true
		}
		if a.ResultID != "" {
			ids[a.ResultID] = true
		}
	}
	rank := func(a Attempt) int {
		switch {
		case fresh[a.N]:
			return 0
		case a.Outcome == OK && a.Status/100 == 2:
			return 1
		case a.Outcome == OK:
			return 2
		case a.Outcome == Failed:
			return 4
		}
		return 3
	}

	steps := []rhStep{{0, 0, false}}
	cur := 0
	for i := 1; i < len(pts); i++ {
		p, q := pts[i-1], pts[i]
		if q.v == cur {
			continue
		}
		if q.v > cur {
			var cands []Attempt
			for _, a := range mine {
				if a.After < 0 && a.End > p.t && a.End <= q.t {
					cands = append(cands, a)
				}
			}
			slices.SortStableFunc(cands, func(a, b Attempt) int {
				return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.End, b.End), cmp.Compare(a.N, b.N))
			})
			cands = cands[:min(len(cands), q.v-cur)]
			slices.SortStableFunc(cands, func(a, b Attempt) int { return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.N, b.N)) })
			for _, a := range cands {
				cur++
				steps = append(steps, rhStep{a.End, cur, true})
			}
		}
		if q.v != cur {
			cur = q.v
			steps = append(steps, rhStep{q.t, cur, false})
		}
	}
	return steps
}

func rhBuildChart(c *Counterexample, m string, top float64, x func(time.Duration) float64, endNs time.Duration) rhChart {
	ch := rhChart{Marker: m, Top: top}
	var final *Effect
	for i := range c.Effects {
		if c.Effects[i].Marker == m {
			final = &c.Effects[i]
			break
		}
	}
	steps := rhSteps(c, m, final, endNs)
	for _, s := range steps {
		ch.Max = max(ch.Max, s.v)
	}
	ch.Final = steps[len(steps)-1].v
	levels := max(ch.Max, 1)
	if final != nil {
		ch.HasWant, ch.Want = true, final.Want
		levels = max(levels, final.Want)
	}
	unit := min(rhLevelUnit, rhChartMaxH/float64(levels))
	ch.Bottom = top + 10 + unit*float64(levels)
	y := func(v int) float64 { return rhRound(ch.Bottom - unit*float64(v)) }
	ch.WantY = y(ch.Want)
	for v := 0; v <= levels; v++ {
		if levels <= 6 || v == 0 || v == levels || ch.HasWant && v == ch.Want {
			ch.Levels = append(ch.Levels, rhLevel{Y: y(v), Label: strconv.Itoa(v)})
		}
	}
	over := func(v int) bool { return ch.HasWant && v > ch.Want }
	for i, s := range steps {
		sx := x(s.t)
		if i > 0 {
			prev := steps[i-1]
			cls := "rise"
			if over(s.v) && s.v > prev.v {
				cls = "rise over"
			}
			if s.inferred {
				cls += " inferred"
			}
			ch.Segs = append(ch.Segs, rhSeg{X1: sx, Y1: y(prev.v), X2: sx, Y2: y(s.v), Class: cls, Count: s.v, Inferred: s.inferred})
			if ch.Note == nil && over(s.v) && s.v > prev.v {
				word := "duplicate"
				if ch.Want == 0 {
					word = "unwanted effect"
				}
				// Right of the riser, or left of it when it would run into the
				// count written after the plot.
				ch.Note = &rhNote{X: sx + 5, Y: rhRound((y(prev.v)+y(s.v))/2 + 4), Text: word, Class: "note-over", Anchor: "start"}
				if sx+5+7*float64(len(word)) > rhPlotX1+4 {
					ch.Note.X, ch.Note.Anchor = sx-5, "end"
				}
				ch.Guide = &rhSeg{X1: sx, X2: sx, Y1: rhLanesTop - 4, Y2: ch.Bottom, Class: "guide"}
			}
		}
		to := rhPlotX1
		if i+1 < len(steps) {
			to = x(steps[i+1].t)
		}
		cls := "level"
		switch {
		case over(s.v):
			cls = "level over"
		case i == len(steps)-1 && ch.HasWant && s.v < ch.Want:
			cls = "level under"
		}
		ch.Segs = append(ch.Segs, rhSeg{X1: sx, Y1: y(s.v), X2: to, Y2: y(s.v), Class: cls, Count: s.v})
	}
	end := rhNote{X: rhPlotX1 + 8, Y: rhRound(y(ch.Final) + 4), Class: "end"}
	end.Text = fmt.Sprintf("%d %s", ch.Final, rhPlural(ch.Final, "effect", "effects"))
	if ch.HasWant {
		end.Text += fmt.Sprintf(", want %d", ch.Want)
		switch {
		case ch.Final > ch.Want:
			end.Class = "end over"
		case ch.Final < ch.Want:
			end.Class = "end under"
			end.Text += ": missing"
		}
	}
	ch.End = end
	ch.LabelY = rhRound(top + 12)
	ch.MarkerY = rhRound(top + 26)
	ch.Label = "marker " + rhTrunc(m, 34)
	if m == "" {
		ch.Label = "the operation's marker"
	}
	return ch
}

// rhShortMarker keeps a marker's last part: "onceproof-1a2b3c4d-m00000052" →
// "m00000052".
func rhShortMarker(m string) string {
	if i := strings.LastIndexByte(m, '-'); i >= 0 && i+1 < len(m) {
		return m[i+1:]
	}
	return m
}

func rhPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func rhBuildLegend(used map[string]bool) []rhLegend {
	var l []rhLegend
	add := func(key string, g *rhGlyph, swatch, text string) {
		if key != "" && !used[key] {
			return
		}
		e := rhLegend{Glyph: g, Swatch: swatch, Text: text}
		switch {
		case g != nil:
			e.Kind = "glyph"
			g.X, g.Y = 13, 8
		case swatch == "band":
			e.Kind = "band"
		case strings.HasPrefix(swatch, "bar-"):
			e.Kind = "bar"
		default:
			e.Kind, e.Swatch = "line", "sw-"+swatch
		}
		l = append(l, e)
	}
	add("bar-2xx", nil, "bar-2xx", "attempt answered 2xx: status and result id after the bar")
	add("bar-other", nil, "bar-other", "attempt answered with another status")
	add("bar-unknown", nil, "bar-unknown", "no response: outcome unknown (the tool may have acted)")
	add("bar-failed", nil, "bar-failed", "not delivered: outcome failed")
	add("bar-crash", nil, "bar-crash", "the tool killed and restarted")
	add("glyph-cross", &rhGlyph{Kind: "cross"}, "", "request fault at the bar's start: the request never reached the tool whole")
	add("glyph-bolt", &rhGlyph{Kind: "bolt"}, "", "response fault at the bar's end: the tool acted, its answer was lost or timed out")
	add("glyph-hold", &rhGlyph{Kind: "hold"}, "", "held at the proxy (mark before the bar's start), released together with the other held attempts")
	add("glyph-dep", &rhGlyph{Kind: "dep"}, "", "fault on the tool's link to its dependency, during the attempt")
	add("glyph-crash", &rhGlyph{Kind: "crash"}, "", "the tool's container killed")
	add("glyph-other", &rhGlyph{Kind: "other"}, "", "other fault (see the attempt log)")
	add("band", nil, "band", "attempts in flight at the same time")
	add("", nil, "line-count", "the oracle's effect count for the marker")
	add("", nil, "line-want", "want: the count exactly-once requires")
	add("over", nil, "line-over", "count above want: a duplicate, or an effect that should not exist (dotted guide: when it happened)")
	add("under", nil, "line-under", "count below want at the end: an effect is missing")
	add("inferred", nil, "line-inferred", "step inferred from an overlapping attempt's 2xx answer (the oracle was not read during the overlap)")
	return l
}

// rhDescribe is the picture's text alternative.
func rhDescribe(c *Counterexample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Timeline of %d %s.", len(c.Attempts), rhPlural(len(c.Attempts), "attempt", "attempts"))
	for _, a := range c.Attempts {
		_, res, _ := rhBarLook(a)
		fmt.Fprintf(&b, " Attempt %d%s from %.3f ms to %.3f ms: %s.", a.N, rhPrefix(" with fault ", a.Fault), float64(a.Start)/1e6, float64(a.End)/1e6, res)
	}
	for _, e := range c.Effects {
		fmt.Fprintf(&b, " Marker %s: %d %s, want %d.", e.Marker, e.Count, rhPlural(e.Count, "effect", "effects"), e.Want)
	}
	return b.String()
}

func rhPrefix(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func rhPx(v float64) string { return strconv.FormatFloat(rhRound(v), 'f', -1, 64) }

var rhTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"px":  rhPx,
	"add": func(a, b float64) float64 { return a + b },
}).Parse(rhTemplateText + rhLintTemplateText))

const rhTemplateText = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="onceproof {{.Version}}">
<link rel="icon" href="data:,">
<title>{{.Title}}</title>
<style>
:root { --fail: #b3261e; --pass: #1e6b32; --unknown: #7a5a00; --ink: #1b1f24; --muted: #5b6470; --line: #d5d9de; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 14px/1.45 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 18px; margin: 0 0 8px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
code, .mono { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12.5px; }
header.top { border-bottom: 2px solid var(--ink); padding-bottom: 10px; margin-bottom: 18px; }
.meta { display: flex; flex-wrap: wrap; gap: 4px 22px; margin: 0; color: var(--muted); }
.meta dt { display: inline; font-weight: bold; color: var(--ink); }
.meta dd { display: inline; margin: 0 0 0 4px; }
.summary { font-size: 16px; margin: 8px 0 0; }
.summary .bad { color: var(--fail); font-weight: bold; }
table { border-collapse: collapse; }
table.matrix { margin: 8px 0 6px; }
.matrix th, .matrix td { border: 1px solid var(--line); padding: 6px 10px; text-align: center; vertical-align: middle; }
.matrix thead th { background: #f3f5f7; font-size: 12.5px; }
.matrix th.tool { text-align: left; white-space: nowrap; }
.matrix .ready { font-size: 12px; white-space: nowrap; }
.matrix .ready.yes { color: var(--pass); font-weight: bold; }
.matrix .ready.no { color: var(--fail); }
.matrix td.v a { color: inherit; text-decoration: none; display: block; }
.matrix td.v a:hover .word, .matrix td.v a:focus .word { text-decoration: underline; }
.word { display: block; font-weight: bold; letter-spacing: .04em; }
.trials { display: block; font-size: 11px; }
td.v-pass { background: #e7f4ea; color: var(--pass); }
td.v-fail { background: var(--fail); color: #fff; }
td.v-fail .word::before { content: "✕ "; }
td.v-unknown { background: repeating-linear-gradient(135deg, #fff6d6 0 6px, #ffe9a3 6px 12px); color: var(--unknown); outline: 2px dashed #a67c00; outline-offset: -4px; font-style: italic; }
td.v-unknown .word::before { content: "? "; }
td.v-pass .word::before { content: "✓ "; }
td.none { color: var(--muted); }
td.tool-error { text-align: left; color: var(--fail); background: #fdf0ef; font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
.tool-note { display: block; color: var(--fail); font-weight: normal; font-size: 11px; }
.tool-contract { display: block; color: var(--muted); font-weight: normal; font-size: 11px; white-space: normal; max-width: 260px; }
.rule { display: inline-block; margin-right: 6px; padding: 0 6px; border: 1px solid var(--fail); border-radius: 3px; font-size: 12px; font-family: "DejaVu Sans Mono", monospace; }
.caption { color: var(--muted); font-size: 12px; margin: 0 0 22px; }
section.failure { border: 1px solid var(--line); border-left: 6px solid var(--fail); border-radius: 4px; padding: 14px 18px; margin: 0 0 22px; }
section.failure.v-unknown { border-left: 6px dashed #a67c00; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 3px; font-size: 13px; font-weight: bold; vertical-align: 2px; }
.badge.v-fail { background: var(--fail); color: #fff; }
.badge.v-unknown { background: #ffe9a3; color: var(--unknown); border: 1px dashed #a67c00; font-style: italic; }
.facts { color: var(--muted); margin: 0 0 8px; font-size: 12.5px; }
.violation { font-weight: bold; color: var(--fail); margin: 6px 0; }
.v-unknown .violation { color: var(--unknown); }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 8px 0; }
dl.kv dt { font-weight: bold; }
dl.kv dd { margin: 0; }
code.repro { display: inline-block; background: #f3f5f7; border: 1px solid var(--line); border-radius: 3px; padding: 3px 7px; user-select: all; -webkit-user-select: all; cursor: text; word-break: break-all; }
.hint { color: var(--muted); font-size: 11.5px; margin-left: 6px; }
figure { margin: 10px 0 4px; }
svg.timeline { display: block; max-width: 100%; height: auto; background: #fcfcfd; border: 1px solid var(--line); }
svg text { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 11px; fill: var(--ink); }
svg .tick line { stroke: #e3e6ea; }
svg .tick text, svg .lvl text { fill: var(--muted); font-size: 10.5px; }
svg .axis { stroke: #9aa3ad; }
svg .lane-label { font-family: "DejaVu Sans Mono", monospace; font-size: 11px; }
svg .lane-rule { stroke: #eef0f2; }
svg .band rect { fill: #ffd54f; fill-opacity: .28; }
svg .band text { fill: #7a5a00; font-size: 10.5px; font-weight: bold; }
.bar-2xx { fill: #2f6db5; stroke: #1d4a80; }
.bar-other { fill: #e08a00; stroke: #9a5e00; }
.bar-unknown { fill: #fff; stroke: #6b7480; stroke-dasharray: 4 2; stroke-width: 1.5; }
.bar-failed { fill: #d6d9dd; stroke: #8d959e; }
.bar-crash { fill: #4a4f57; stroke: #25282d; }
svg .res-2xx { font-weight: bold; fill: #1d4a80; }
svg .res-other { font-weight: bold; fill: #9a5e00; }
svg .res-unknown, svg .res-failed { fill: #4a4f57; font-style: italic; }
.g-cross { stroke: #c62828; stroke-width: 3; stroke-linecap: round; fill: none; }
.g-bolt { fill: #ffca28; stroke: #c62828; stroke-width: 1.3; stroke-linejoin: round; }
.g-dep { fill: #ce93d8; stroke: #6a1b9a; stroke-width: 1.3; stroke-linejoin: round; }
.g-hold { fill: #6a1b9a; }
.g-crash { fill: #c62828; stroke: #5f0f0f; }
.g-other { fill: #fff; stroke: #c62828; stroke-width: 2; }
svg .chart-label { font-weight: bold; }
svg .chart-marker { fill: var(--muted); font-size: 10px; font-family: "DejaVu Sans Mono", monospace; }
svg line.want { stroke: #2e7d32; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .want-label { fill: #2e7d32; font-size: 10.5px; }
svg line.level, svg line.rise { stroke: #1b1f24; stroke-width: 2.5; }
svg line.over { stroke: #d32f2f; stroke-width: 3.5; }
svg line.under { stroke: #b26a00; }
svg line.inferred { stroke-dasharray: 2 3; }
svg line.guide { stroke: #d32f2f; stroke-width: 1; stroke-dasharray: 2 3; }
svg text.note-over { fill: #d32f2f; font-weight: bold; font-size: 12px; }
svg text.end { font-weight: bold; }
svg text.end.over { fill: #d32f2f; }
svg text.end.under { fill: #b26a00; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 18px; padding: 0; margin: 6px 0 0; font-size: 11.5px; color: var(--muted); }
ul.legend li { display: flex; align-items: center; gap: 6px; }
ul.legend svg { flex: none; }
.sw-line-count { stroke: #1b1f24; stroke-width: 2.5; }
.sw-line-want { stroke: #2e7d32; stroke-width: 1.5; stroke-dasharray: 6 4; }
.sw-line-over { stroke: #d32f2f; stroke-width: 3.5; }
.sw-line-under { stroke: #b26a00; stroke-width: 2.5; }
.sw-line-inferred { stroke: #1b1f24; stroke-width: 2.5; stroke-dasharray: 2 3; }
.sw-band { fill: #ffd54f; fill-opacity: .5; }
table.log { font-size: 12px; margin: 4px 0; }
table.log th, table.log td { border: 1px solid var(--line); padding: 3px 7px; text-align: left; vertical-align: top; white-space: nowrap; }
table.log td.err, table.log td.body { white-space: normal; }
table.log thead th { background: #f3f5f7; }
table.log td.err { color: var(--fail); }
table.log td.body { color: var(--muted); }
table.log td.num { text-align: right; }
td.eff-over { color: var(--fail); font-weight: bold; }
td.eff-under { color: #b26a00; font-weight: bold; }
a.up { font-size: 12px; color: var(--muted); }
:target { scroll-margin-top: 8px; }
section.failure:target { box-shadow: 0 0 0 3px #90caf9; }
footer { color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 8px; }
</style>
{{- with .Lint}}{{template "lint-style"}}{{end}}
</head>
<body>
<main>
<header class="top">
<h1>onceproof {{if .LintOnly}}lint{{else}}report{{end}}</h1>
<dl class="meta">
<div><dt>onceproof</dt><dd>{{.Version}}</dd></div>
{{- if not .LintOnly}}
<div><dt>toxiproxy</dt><dd>{{.Toxiproxy}}</dd></div>
{{- end}}
<div><dt>started</dt><dd>{{.Started}}</dd></div>
</dl>
<p class="summary" id="summary">{{if .LintOnly}}{{.Lint.Headline}}{{else}}{{.NTools}} {{if eq .NTools 1}}tool{{else}}tools{{end}}, {{.NReady}} agent-ready{{if .NFail}} · <span class="bad">{{.NFail}} {{if eq .NFail 1}}failure{{else}}failures{{end}}</span>{{end}}{{if .NUnknown}} · {{.NUnknown}} unknown{{end}}{{end}}</p>
</header>
{{- if not .LintOnly}}

<h2 id="matrix">Verdicts</h2>
<table class="matrix">
<thead>
<tr><th class="tool" scope="col">tool</th><th scope="col">agent-ready</th>{{range .Columns}}<th scope="col">{{.}}</th>{{end}}</tr>
</thead>
<tbody>
{{- $ncols := len .Columns}}
{{- range .Rows}}
<tr data-tool="{{.Tool}}"><th class="tool" scope="row">{{.Tool}}{{with .Contract}}<span class="tool-contract">{{.}}</span>{{end}}{{with .Note}}<span class="tool-note">error: {{.}}</span>{{end}}</th>
<td class="ready {{if .Ready}}yes{{else}}no{{end}}">{{if .Ready}}✓ agent-ready{{else}}NOT agent-ready{{end}}{{with .Duration}}<br><span class="trials">{{.}}</span>{{end}}</td>
{{- if .Error}}
<td class="tool-error" colspan="{{$ncols}}"><b>not certified:</b> {{.Error}}</td>
{{- else}}
{{- range .Cells}}
{{- if .Ran}}
<td class="v {{.Class}}" title="{{.Title}}">{{if .Link}}<a href="#{{.Link}}">{{end}}<span class="word">{{.Word}}</span><span class="trials">{{.Trials}}</span>{{if .Link}}</a>{{end}}</td>
{{- else}}
<td class="none" title="not run">—</td>
{{- end}}
{{- end}}
{{- end}}
</tr>
{{- end}}
</tbody>
</table>
<p class="caption">Each cell: verdict, then valid trials / checks. PASS = exactly-once held; FAIL = a counterexample was found (click for it); UNKNOWN = too few trials had their fault fire, or the harness hit an error; — = scenario not run.</p>
{{- end}}
{{- with .Lint}}{{template "lint" .}}{{end}}

{{range .Failures}}
<section class="failure {{.Class}}" id="{{.ID}}" data-tool="{{.Tool}}" data-scenario="{{.Scenario}}">
<h2>{{.Tool}} × {{.Scenario}} <span class="badge {{.Class}}">{{.Word}}</span></h2>
<p class="facts">{{.Checks}} {{if eq .Checks 1}}check{{else}}checks{{end}}, {{.Valid}} valid {{if eq .Valid 1}}trial{{else}}trials{{end}}, seed {{.Seed}} · <a class="up" href="#matrix">back to the verdicts</a></p>
{{with .Reason}}<p class="violation">{{.}}</p>{{end}}
{{- with .CE}}
<p class="violation">{{with .Rule}}<span class="rule" title="the rule broken">{{.}}</span>{{end}}{{.Violation}}</p>
{{- end}}
<dl class="kv">
{{- with .CE}}
<dt>plan</dt><dd>{{.Plan}}</dd>
{{- end}}
{{- with .Repro}}
<dt>replay</dt><dd><code class="repro" tabindex="0">{{.}}</code><span class="hint">click to select, then copy</span></dd>
{{- end}}
</dl>
{{- with .CE}}
{{- with .Timeline}}
<h3>Timeline of the shrunk counterexample</h3>
<figure>
<svg class="timeline" width="{{px .Width}}" height="{{px .Height}}" viewBox="0 0 {{px .Width}} {{px .Height}}" role="img" aria-label="{{.Desc}}" data-axis-max-ms="{{.AxisMaxMs}}">
<desc>{{.Desc}}</desc>
{{- $t := .}}
<g class="ticks">
{{- range .Ticks}}
<g class="tick"><line x1="{{px .X}}" y1="{{px (add $t.AxisY 6)}}" x2="{{px .X}}" y2="{{px $t.Height}}"/><text x="{{px .X}}" y="{{px $t.AxisY}}" text-anchor="middle">{{.Label}}</text></g>
{{- end}}
</g>
{{- range .Bands}}
<g class="band"><rect x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}"/><text x="{{px .LabelX}}" y="{{px .LabelY}}">{{.Label}}</text></g>
{{- end}}
{{- range .Lanes}}
<g class="lane" data-n="{{.N}}">
<line class="lane-rule" x1="0" y1="{{px (add .Y 15)}}" x2="{{px $t.Width}}" y2="{{px (add .Y 15)}}"/>
<text class="lane-label" x="8" y="{{px (add .Y 4)}}">{{.Label}}<title>{{.FullLabel}}</title></text>
<rect class="bar {{.BarClass}}" x="{{px .BarX}}" y="{{px .BarY}}" width="{{px .BarW}}" height="{{px .BarH}}" rx="2" data-n="{{.N}}" data-start-ms="{{.StartMs}}" data-end-ms="{{.EndMs}}" data-status="{{.Status}}" data-result-id="{{.ResultID}}" data-outcome="{{.Outcome}}" data-fault="{{.Fault}}"><title>{{.Title}}</title></rect>
{{- with .Glyph}}{{template "glyph" .}}{{end}}
<text class="result {{.ResultCls}}" x="{{px .ResultX}}" y="{{px (add .Y 4)}}">{{.Result}}</text>
</g>
{{- end}}
{{- range .Charts}}
<g class="effects" data-marker="{{.Marker}}"{{if .HasWant}} data-want="{{.Want}}"{{end}} data-final="{{.Final}}" data-max="{{.Max}}">
<line class="axis" x1="{{px $t.PlotX0}}" y1="{{px .Top}}" x2="{{px $t.PlotX0}}" y2="{{px .Bottom}}"/>
<line class="axis" x1="{{px $t.PlotX0}}" y1="{{px .Bottom}}" x2="{{px $t.PlotX1}}" y2="{{px .Bottom}}"/>
<text class="chart-label" x="8" y="{{px .LabelY}}">effect count (oracle)</text>
<text class="chart-marker" x="8" y="{{px .MarkerY}}">{{.Label}}<title>{{.Marker}}</title></text>
{{- range .Levels}}
<g class="lvl"><text x="{{px (add $t.PlotX0 -6)}}" y="{{px (add .Y 4)}}" text-anchor="end">{{.Label}}</text></g>
{{- end}}
{{- if .HasWant}}
<line class="want" x1="{{px $t.PlotX0}}" y1="{{px .WantY}}" x2="{{px $t.PlotX1}}" y2="{{px .WantY}}" data-want="{{.Want}}"/>
{{- end}}
{{- with .Guide}}
<line class="{{.Class}}" x1="{{px .X1}}" y1="{{px .Y1}}" x2="{{px .X2}}" y2="{{px .Y2}}"/>
{{- end}}
{{- range .Segs}}
<line class="step {{.Class}}" x1="{{px .X1}}" y1="{{px .Y1}}" x2="{{px .X2}}" y2="{{px .Y2}}" data-count="{{.Count}}"/>
{{- end}}
{{- with .Note}}
<text class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}" text-anchor="{{.Anchor}}">{{.Text}}</text>
{{- end}}
{{- with .End}}
<text class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}">{{.Text}}</text>
{{- end}}
</g>
{{- end}}
</svg>
<ul class="legend">
{{- range .Legend}}
<li><svg width="26" height="16" viewBox="0 0 26 16" aria-hidden="true">{{if eq .Kind "glyph"}}{{template "glyph" .Glyph}}{{else if eq .Kind "band"}}<rect class="sw-band" x="1" y="1" width="24" height="14"/>{{else if eq .Kind "bar"}}<rect class="{{.Swatch}}" x="2" y="3" width="22" height="10" rx="2"/>{{else}}<line class="{{.Swatch}}" x1="1" y1="8" x2="25" y2="8"/>{{end}}</svg>{{.Text}}</li>
{{- end}}
</ul>
</figure>
{{- end}}
<h3>Attempts</h3>
<table class="log">
<thead><tr><th>#</th><th>op</th><th>fault</th><th>delay</th><th>start</th><th>end</th><th>outcome</th><th>status</th><th>result id</th><th>effects</th>{{if .Headers}}<th>headers</th>{{end}}<th>error / body</th></tr></thead>
<tbody>
{{- $headers := .Headers}}
{{- range .Attempts}}
<tr><td class="num">{{.N}}</td><td class="mono" title="{{.FullOp}} (marker {{.Marker}})">{{.Op}}</td><td>{{.Fault}}</td><td class="num">{{.Delay}}</td><td class="num">{{.Start}}</td><td class="num">{{.End}}</td><td>{{.Outcome}}</td><td class="num">{{.Status}}</td><td class="mono">{{.ResultID}}</td><td class="mono">{{.Effects}}</td>{{if $headers}}<td class="body mono">{{.Headers}}</td>{{end}}{{if .Error}}<td class="err">{{.Error}}</td>{{else}}<td class="body mono" title="{{.FullBody}}">{{.Body}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
<h3>Effects</h3>
<table class="log">
<thead><tr><th>marker</th><th>count</th><th>want</th><th></th></tr></thead>
<tbody>
{{- range .Effects}}
<tr><td class="mono">{{.Marker}}</td><td class="num">{{.Count}}</td><td class="num">{{.Want}}</td><td class="eff-{{.Class}}">{{.Word}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
</section>
{{end}}
<footer>Generated by onceproof {{.Version}} from the run started {{.Started}}. Self-contained: no scripts, no external resources.</footer>
</main>
</body>
</html>
{{define "glyph"}}<g class="glyph glyph-{{.Kind}}" transform="translate({{px .X}},{{px .Y}})">
{{- if eq .Kind "cross"}}<path class="g-cross" d="M-5,-5L5,5M5,-5L-5,5"/>
{{- else if eq .Kind "bolt"}}<path class="g-bolt" d="M2,-9L-5,1H0L-2,9L5,-2H0Z"/>
{{- else if eq .Kind "dep"}}<path class="g-dep" d="M2,-9L-5,1H0L-2,9L5,-2H0Z"/>
{{- else if eq .Kind "hold"}}<rect class="g-hold" x="-5" y="-7" width="3.5" height="14"/><rect class="g-hold" x="1.5" y="-7" width="3.5" height="14"/>
{{- else if eq .Kind "crash"}}<path class="g-crash" d="M0,-8L2,-3L7,-4L3,0L7,4L2,3L0,8L-2,3L-7,4L-3,0L-7,-4L-2,-3Z"/>
{{- else}}<path class="g-other" d="M0,-6L6,0L0,6L-6,0Z"/>
{{- end}}</g>{{end}}`
