package html

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/harness/report"
)

type timeline struct {
	Width, Height float64
	PlotX0        float64
	PlotX1        float64
	AxisY         float64
	LanesTop      float64
	LanesBottom   float64
	AxisMaxMs     string
	Ticks         []tick
	Bands         []band
	Lanes         []lane
	Charts        []chart
	Legend        []legend
	Desc          string
}

type tick struct {
	X     float64
	Label string
}

// band shades a stretch of time in which several attempts were in flight.
type band struct {
	X, W, Y, H float64
	LabelX     float64
	LabelY     float64
	Label      string
}

type glyph struct {
	Kind string // cross, bolt, hold, dep, crash, other
	X, Y float64
}

type lane struct {
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
	Glyph     *glyph
	Result    string
	ResultX   float64
	ResultCls string
	Title     string
}

type chart struct {
	Marker  string
	Label   string
	Top     float64
	Bottom  float64
	HasWant bool
	Want    int
	WantY   float64
	Final   int
	Max     int
	Levels  []level
	Segs    []seg
	Note    *note
	Guide   *seg
	End     note
	LabelY  float64
	MarkerY float64
}

type level struct {
	Y     float64
	Label string
}

type seg struct {
	X1, Y1, X2, Y2 float64
	Class          string
	Count          int
	Inferred       bool
}

type note struct {
	X, Y   float64
	Text   string
	Class  string
	Anchor string // text-anchor: start or end
}

type legend struct {
	Kind   string // glyph, bar, band or line
	Glyph  *glyph
	Swatch string // CSS class of the bar or line sample
	Text   string
}

// trunc shortens s to n runes with an ellipsis.
func trunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func roundPx(v float64) float64 { return math.Round(v*10) / 10 }

// buildTimeline draws c; an answer that carries the replayed header (""
// for none) is labelled a replay.
func buildTimeline(c *report.Counterexample, replayed string) timeline {
	tl := timeline{Width: width, PlotX0: plotX0, PlotX1: plotX1, AxisY: axisY, LanesTop: lanesTop}

	var maxNs time.Duration
	for _, a := range c.Attempts {
		maxNs = max(maxNs, a.Start, a.End)
	}
	maxMs := float64(maxNs) / 1e6
	step := niceStep(maxMs)
	nTicks := max(1, int(math.Ceil(maxMs/step-1e-9)))
	axisMax := float64(nTicks) * step
	tl.AxisMaxMs = formatMs(axisMax, step)
	x := func(d time.Duration) float64 {
		return roundPx(plotX0 + float64(d)/1e6/axisMax*(plotX1-plotX0))
	}
	for i := 0; i <= nTicks; i++ {
		label := formatMs(float64(i)*step, step)
		if i == 0 || i == nTicks {
			label += " ms"
		}
		tl.Ticks = append(tl.Ticks, tick{X: roundPx(plotX0 + float64(i)/float64(nTicks)*(plotX1-plotX0)), Label: label})
	}

	used := map[string]bool{}
	markers := markers(c)
	for i, a := range c.Attempts {
		y := lanesTop + laneH*float64(i) + laneH/2
		ln := lane{
			N:        a.N,
			Y:        y,
			BarX:     x(a.Start),
			BarY:     y - barH/2,
			BarH:     barH,
			StartMs:  strconv.FormatFloat(float64(a.Start)/1e6, 'f', 3, 64),
			EndMs:    strconv.FormatFloat(float64(a.End)/1e6, 'f', 3, 64),
			Status:   a.Status,
			ResultID: a.ResultID,
			Outcome:  string(a.Outcome),
			Fault:    a.Fault,
		}
		ln.BarW = max(roundPx(x(a.End)-ln.BarX), 2)
		ln.FullLabel = fmt.Sprintf("#%d %s", a.N, report.ShortOp(a.Op))
		if note := a.LaneNote(); note != "" {
			ln.FullLabel += " " + note
		}
		if len(markers) > 1 && a.Marker != "" {
			// Say which chart below the attempt counts towards.
			ln.FullLabel += " " + shortMarker(a.Marker)
		}
		if a.Fault != "" {
			ln.FullLabel += " " + a.Fault
		}
		ln.Label = trunc(ln.FullLabel, 38)
		ln.BarClass, ln.Result, ln.ResultCls = barLook(a)
		if replayed != "" && a.Headers[replayed] != "" {
			ln.Result += " · replayed"
		}
		used[ln.BarClass] = true
		end := ln.BarX + ln.BarW
		ln.ResultX = end + 6
		if kind, at := faultGlyph(a); kind != "" {
			gx := ln.BarX
			switch at {
			case "end":
				gx = end
				ln.ResultX = end + 12
			case "mid":
				gx = roundPx(ln.BarX + ln.BarW/2)
			case "before":
				gx = ln.BarX - 6
			}
			ln.Glyph = &glyph{Kind: kind, X: gx, Y: y}
			used["glyph-"+kind] = true
		}
		ln.Title = fmt.Sprintf("attempt %d: %s → %s ms, %s", a.N, ln.StartMs, ln.EndMs, or(ln.Result, "no result"))
		if a.Error != "" {
			ln.Title += " (" + a.Error + ")"
		}
		if h := a.HeaderText(); h != "" {
			ln.Title += "; headers " + h
		}
		tl.Lanes = append(tl.Lanes, ln)
	}
	tl.LanesBottom = lanesTop + laneH*float64(len(c.Attempts))

	for _, b := range overlaps(c.Attempts) {
		band := band{X: x(b.from), Y: lanesTop - 12, Label: fmt.Sprintf("%d in flight", b.n)}
		band.W = max(roundPx(x(b.to)-band.X), 1)
		band.H = tl.LanesBottom - band.Y
		band.LabelX, band.LabelY = band.X+3, lanesTop-3
		tl.Bands = append(tl.Bands, band)
	}
	if len(tl.Bands) > 0 {
		used["band"] = true
	}

	top := tl.LanesBottom + chartGap
	for _, m := range markers {
		ch := buildChart(c, m, top, x, maxNs)
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
		top = ch.Bottom + chartGap
	}
	tl.Height = top
	tl.Legend = buildLegend(used)
	tl.Desc = describe(c)
	return tl
}

// niceStep picks a tick step of 1, 2, 2.5 or 5 times a power of ten giving
// about six ticks over maxMs.
func niceStep(maxMs float64) float64 {
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

func formatMs(v, step float64) string {
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9))) + 1
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// barLook returns the bar's CSS class and the text written after it.
func barLook(a report.Attempt) (class, result, resultClass string) {
	switch a.Outcome {
	case report.OK:
		result = strconv.Itoa(a.Status)
		if a.ResultID != "" {
			result += " " + a.ResultID
		}
		if a.Status/100 == 2 {
			return "bar-2xx", result, "res-2xx"
		}
		return "bar-other", result, "res-other"
	case report.Failed:
		return "bar-failed", "failed: " + shortErr(a), "res-failed"
	case report.Unknown:
		return "bar-unknown", "unknown: " + shortErr(a), "res-unknown"
	}
	if isCrash(a) {
		res := "restarted"
		if a.After >= 0 {
			res = fmt.Sprintf("restarted, %d survived", a.After)
		}
		return "bar-crash", res, "res-other"
	}
	return "bar-unknown", or(string(a.Outcome), "?"), "res-unknown"
}

// shortErr is the gist of an attempt's failure, from its kind: "timeout",
// "refused", "reset", "EOF", "gave up", "abandoned".
func shortErr(a report.Attempt) string {
	switch a.Failure {
	case "":
		if a.Error == "" {
			return "no response"
		}
		return "error"
	case report.FailureEOF:
		return "EOF"
	case report.FailureGaveUp:
		return "gave up"
	case report.FailureOther:
		return "error"
	}
	return string(a.Failure)
}

// isCrash reports whether a is the record of the tool being killed.
func isCrash(a report.Attempt) bool { return a.Phase == report.PhaseCrash }

// faultGlyph says which mark an attempt's fault gets and where on the bar,
// from the phase it struck in: request faults at its start, lost responses
// at its end, holds before it, dependency faults in its middle.
func faultGlyph(a report.Attempt) (kind, at string) {
	switch a.Phase {
	case "":
		if a.Fault == "" {
			return "", ""
		}
		return "other", "start"
	case report.PhaseBeforeServer, report.PhaseTorn:
		return "cross", "start"
	case report.PhaseResponseLost:
		return "bolt", "end"
	case report.PhaseHeld:
		return "hold", "before"
	case report.PhaseDependency:
		return "dep", "mid"
	case report.PhaseCrash:
		return "crash", "start"
	}
	return "other", "start"
}

type interval struct {
	from, to time.Duration
	n        int
}

// overlaps returns the stretches in which two or more attempts were in
// flight, each with the most attempts in flight during it.
func overlaps(as []report.Attempt) []interval {
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
	var out []interval
	n := 0
	var cur *interval
	for _, e := range evs {
		n += e.d
		switch {
		case n >= 2 && cur == nil:
			cur = &interval{from: e.t, n: n}
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

// markers lists the markers to chart: the effects' in order, then any
// other marker the attempts carry.
func markers(c *report.Counterexample) []string {
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

// ofMarker reports whether attempt a counts towards marker m; an attempt
// without a marker belongs to the only marker there is.
func ofMarker(a report.Attempt, m string, markers int) bool {
	return a.Marker == m || a.Marker == "" && markers == 1
}

type point struct {
	t time.Duration
	v int
}

type step struct {
	t        time.Duration
	v        int
	inferred bool
}

// steps reconstructs the oracle's count for marker m over time. The count is
// 0 when the trial starts (markers are fresh), Before at the start and After at
// the end of an attempt when they were taken, and the final effect count
// after the last attempt. Between two readings that differ, the change is
// put at the end of the unread (overlapping) attempts that most likely made
// it, 2xx answers with a result id not seen before first; those steps are
// inferred. A change no unread attempt explains is put at the later reading.
func steps(c *report.Counterexample, m string, final *report.Effect, endNs time.Duration) []step {
	nm := len(markers(c))
	var mine []report.Attempt
	for _, a := range c.Attempts {
		if ofMarker(a, m, nm) {
			mine = append(mine, a)
		}
	}
	pts := []point{{0, 0}}
	for _, a := range mine {
		if a.Before >= 0 {
			pts = append(pts, point{a.Start, a.Before})
		}
		if a.After >= 0 {
			pts = append(pts, point{a.End, a.After})
		}
	}
	if final != nil {
		pts = append(pts, point{endNs, final.Count})
	}
	slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(a.t, b.t) })

	// A 2xx answer is new when no attempt that ended earlier had its result id.
	byEnd := slices.Clone(mine)
	slices.SortStableFunc(byEnd, func(a, b report.Attempt) int { return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.N, b.N)) })
	fresh := map[int]bool{}
	ids := map[string]bool{}
	for _, a := range byEnd {
		if a.Outcome == report.OK && a.Status/100 == 2 && a.ResultID != "" && !ids[a.ResultID] {
			fresh[a.N] = true
		}
		if a.ResultID != "" {
			ids[a.ResultID] = true
		}
	}
	rank := func(a report.Attempt) int {
		switch {
		case fresh[a.N]:
			return 0
		case a.Outcome == report.OK && a.Status/100 == 2:
			return 1
		case a.Outcome == report.OK:
			return 2
		case a.Outcome == report.Failed:
			return 4
		}
		return 3
	}

	steps := []step{{0, 0, false}}
	cur := 0
	for i := 1; i < len(pts); i++ {
		p, q := pts[i-1], pts[i]
		if q.v == cur {
			continue
		}
		if q.v > cur {
			var cands []report.Attempt
			for _, a := range mine {
				if a.After < 0 && a.End > p.t && a.End <= q.t {
					cands = append(cands, a)
				}
			}
			slices.SortStableFunc(cands, func(a, b report.Attempt) int {
				return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.End, b.End), cmp.Compare(a.N, b.N))
			})
			cands = cands[:min(len(cands), q.v-cur)]
			slices.SortStableFunc(cands, func(a, b report.Attempt) int { return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.N, b.N)) })
			for _, a := range cands {
				cur++
				steps = append(steps, step{a.End, cur, true})
			}
		}
		if q.v != cur {
			cur = q.v
			steps = append(steps, step{q.t, cur, false})
		}
	}
	return steps
}

func buildChart(c *report.Counterexample, m string, top float64, x func(time.Duration) float64, endNs time.Duration) chart {
	ch := chart{Marker: m, Top: top}
	var final *report.Effect
	for i := range c.Effects {
		if c.Effects[i].Marker == m {
			final = &c.Effects[i]
			break
		}
	}
	steps := steps(c, m, final, endNs)
	for _, s := range steps {
		ch.Max = max(ch.Max, s.v)
	}
	ch.Final = steps[len(steps)-1].v
	levels := max(ch.Max, 1)
	if final != nil {
		ch.HasWant, ch.Want = true, final.Want
		levels = max(levels, final.Want)
	}
	unit := min(levelUnit, chartMaxH/float64(levels))
	ch.Bottom = top + 10 + unit*float64(levels)
	y := func(v int) float64 { return roundPx(ch.Bottom - unit*float64(v)) }
	ch.WantY = y(ch.Want)
	for v := 0; v <= levels; v++ {
		if levels <= 6 || v == 0 || v == levels || ch.HasWant && v == ch.Want {
			ch.Levels = append(ch.Levels, level{Y: y(v), Label: strconv.Itoa(v)})
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
			ch.Segs = append(ch.Segs, seg{X1: sx, Y1: y(prev.v), X2: sx, Y2: y(s.v), Class: cls, Count: s.v, Inferred: s.inferred})
			if ch.Note == nil && over(s.v) && s.v > prev.v {
				word := "duplicate"
				if ch.Want == 0 {
					word = "unwanted effect"
				}
				// Right of the riser, or left of it when it would run into the
				// count written after the plot.
				ch.Note = &note{X: sx + 5, Y: roundPx((y(prev.v)+y(s.v))/2 + 4), Text: word, Class: "note-over", Anchor: "start"}
				if sx+5+7*float64(len(word)) > plotX1+4 {
					ch.Note.X, ch.Note.Anchor = sx-5, "end"
				}
				ch.Guide = &seg{X1: sx, X2: sx, Y1: lanesTop - 4, Y2: ch.Bottom, Class: "guide"}
			}
		}
		to := plotX1
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
		ch.Segs = append(ch.Segs, seg{X1: sx, Y1: y(s.v), X2: to, Y2: y(s.v), Class: cls, Count: s.v})
	}
	end := note{X: plotX1 + 8, Y: roundPx(y(ch.Final) + 4), Class: "end"}
	end.Text = fmt.Sprintf("%d %s", ch.Final, plural(ch.Final, "effect", "effects"))
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
	ch.LabelY = roundPx(top + 12)
	ch.MarkerY = roundPx(top + 26)
	ch.Label = "marker " + trunc(m, 34)
	if m == "" {
		ch.Label = "the operation's marker"
	}
	return ch
}

// shortMarker keeps a marker's last part: "onceproof-1a2b3c4d-m00000052" →
// "m00000052".
func shortMarker(m string) string {
	if i := strings.LastIndexByte(m, '-'); i >= 0 && i+1 < len(m) {
		return m[i+1:]
	}
	return m
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func buildLegend(used map[string]bool) []legend {
	var l []legend
	add := func(key string, g *glyph, swatch, text string) {
		if key != "" && !used[key] {
			return
		}
		e := legend{Glyph: g, Swatch: swatch, Text: text}
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
	add("glyph-cross", &glyph{Kind: "cross"}, "", "request fault at the bar's start: the request never reached the tool whole")
	add("glyph-bolt", &glyph{Kind: "bolt"}, "", "response fault at the bar's end: the tool acted, its answer was lost or timed out")
	add("glyph-hold", &glyph{Kind: "hold"}, "", "held at the proxy (mark before the bar's start), released together with the other held attempts")
	add("glyph-dep", &glyph{Kind: "dep"}, "", "fault on the tool's link to its dependency, during the attempt")
	add("glyph-crash", &glyph{Kind: "crash"}, "", "the tool's container killed")
	add("glyph-other", &glyph{Kind: "other"}, "", "other fault (see the attempt log)")
	add("band", nil, "band", "attempts in flight at the same time")
	add("", nil, "line-count", "the oracle's effect count for the marker")
	add("", nil, "line-want", "want: the count exactly-once requires")
	add("over", nil, "line-over", "count above want: a duplicate, or an effect that should not exist (dotted guide: when it happened)")
	add("under", nil, "line-under", "count below want at the end: an effect is missing")
	add("inferred", nil, "line-inferred", "step inferred from an overlapping attempt's 2xx answer (the oracle was not read during the overlap)")
	return l
}

// describe is the picture's text alternative.
func describe(c *report.Counterexample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Timeline of %d %s.", len(c.Attempts), plural(len(c.Attempts), "attempt", "attempts"))
	for _, a := range c.Attempts {
		_, res, _ := barLook(a)
		fmt.Fprintf(&b, " Attempt %d%s from %.3f ms to %.3f ms: %s.", a.N, prefix(" with fault ", a.Fault), float64(a.Start)/1e6, float64(a.End)/1e6, res)
	}
	for _, e := range c.Effects {
		fmt.Fprintf(&b, " Marker %s: %d %s, want %d.", e.Marker, e.Count, plural(e.Count, "effect", "effects"), e.Want)
	}
	return b.String()
}

func prefix(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func px(v float64) string { return strconv.FormatFloat(roundPx(v), 'f', -1, 64) }
