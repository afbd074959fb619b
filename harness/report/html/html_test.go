package html

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/onceproof/onceproof/harness/lint"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// samplePage is a report with every case the HTML page draws: a lost
// response (sequential attempts with oracle counts), check-then-act's
// concurrent duplicate (overlapping held attempts, counts not taken), an
// inconclusive scenario, passes, a scenario a tool did not run and a tool
// whose preflight failed. Its shapes come from a real `onceproof demo` run.
func samplePage() *report.Report {
	const seed = 7057939659976774153
	repro := func(tool, sc string) string {
		return fmt.Sprintf("onceproof demo --tool %s --scenario %s --seed %d --checks 10", tool, sc, seed)
	}
	pass := func(id string) report.ScenarioReport {
		return report.ScenarioReport{ID: id, Passed: true, Verdict: report.Pass, Checks: 10, ValidTrials: 10, Seed: seed, Duration: 120 * time.Millisecond}
	}
	us := time.Microsecond
	lost := &report.Counterexample{
		Plan:      "lose-response/limit-data, then delivered after 0s, then a replay after 0s",
		Violation: "2 effects for marker onceproof-bd93bfd6-m00000052, want exactly 1",
		Attempts: []report.Attempt{
			{N: 1, Op: "op-bd93bfd6-00000051", Marker: "onceproof-bd93bfd6-m00000052", Fault: "lose-response/limit-data", Phase: report.PhaseResponseLost,
				Start: 315 * us, End: 3737 * us, Outcome: report.Unknown, Error: "read response: unexpected EOF", Failure: report.FailureEOF, Before: 0, After: 1},
			{N: 2, Op: "op-bd93bfd6-00000051", Marker: "onceproof-bd93bfd6-m00000052",
				Start: 3822 * us, End: 6127 * us, Outcome: report.OK, Status: 201, ResultID: "t-57",
				Body: `{"id":"t-57","subject":"refund onceproof-bd93bfd6-m00000052","amount":157}`, Before: 1, After: 2},
		},
		Effects: []report.Effect{{Marker: "onceproof-bd93bfd6-m00000052", Count: 2, Want: 1}},
	}
	race := &report.Counterexample{
		Plan:      "2 identical attempts released together through a barrier, then a settle retry after 0s",
		Violation: "2 effects for marker onceproof-916742b9-m00000072, want exactly 1",
		Attempts: []report.Attempt{
			{N: 1, Op: "op-916742b9-00000071", Marker: "onceproof-916742b9-m00000072", Fault: "hold (barrier)", Phase: report.PhaseHeld,
				Start: 22 * us, End: 2499 * us, Outcome: report.OK, Status: 201, ResultID: "t-112",
				Body: `{"id":"t-112","subject":"refund onceproof-916742b9-m00000072","amount":157}`, Before: -1, After: -1},
			{N: 2, Op: "op-916742b9-00000071", Marker: "onceproof-916742b9-m00000072", Fault: "hold (barrier)", Phase: report.PhaseHeld,
				Start: 70 * us, End: 2580 * us, Outcome: report.OK, Status: 201, ResultID: "t-113",
				Body: `{"id":"t-113","subject":"refund onceproof-916742b9-m00000072","amount":157}`, Before: -1, After: -1},
			{N: 3, Op: "op-916742b9-00000071", Marker: "onceproof-916742b9-m00000072",
				Start: 2651 * us, End: 2925 * us, Outcome: report.OK, Status: 201, ResultID: "t-112",
				Body: `{"id":"t-112","subject":"refund onceproof-916742b9-m00000072","amount":157}`, Before: 2, After: 2},
		},
		Effects: []report.Effect{{Marker: "onceproof-916742b9-m00000072", Count: 2, Want: 1}},
	}
	r := &report.Report{
		Version:   report.ReportVersion,
		Onceproof: "v0.9.0-test",
		Toxiproxy: "embedded",
		Started:   time.Date(2026, 11, 29, 9, 21, 45, 147209349, time.UTC),
		Tools: []report.ToolReport{
			{
				Name: "correct",
				Scenarios: []report.ScenarioReport{
					pass("lost-response"), pass("pre-server-error"), pass("concurrent-duplicate"), pass("key-mismatch"),
				},
				Duration: 1086 * time.Millisecond,
			},
			{
				Name: "naive",
				Scenarios: []report.ScenarioReport{
					{ID: "lost-response", Verdict: report.Fail, Checks: 1, ValidTrials: 1, Seed: seed,
						Reason: lost.Violation, Counterexample: lost, Repro: repro("naive", "lost-response"), Duration: 188 * time.Millisecond},
					pass("pre-server-error"),
					{ID: "concurrent-duplicate", Verdict: report.Inconclusive, Checks: 10, ValidTrials: 2, Seed: seed,
						Reason:   `only 2 of 10 trials had their fault fire (want 5); the tool answered <b>429</b> & "retry later"`,
						Repro:    repro("naive", "concurrent-duplicate"),
						Duration: 2 * time.Second},
				},
				Duration: 606 * time.Millisecond,
			},
			{
				Name: "check-then-act",
				Scenarios: []report.ScenarioReport{
					pass("lost-response"),
					pass("pre-server-error"),
					{ID: "concurrent-duplicate", Verdict: report.Fail, Checks: 1, ValidTrials: 1, Seed: seed,
						Reason: race.Violation, Counterexample: race, Repro: repro("check-then-act", "concurrent-duplicate"), Duration: 81 * time.Millisecond},
					pass("key-mismatch"),
				},
				Duration: 633 * time.Millisecond,
			},
			{
				Name:  "broken",
				Error: "preflight failed: unreachable: tool broken: POST https://broken.example/refunds got no response: dial: connection refused <script>alert(1)</script>",
			},
		},
	}
	for i := range r.Tools {
		r.Tools[i].Finish()
	}
	return r
}

func render(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Write(&b, r))
	return b.Bytes()
}

// golden compares got with testdata/html/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "html", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./harness -run TestWriteHTML -update to create it")
	assert.Equal(t, string(want), string(got), "%s differs; run go test ./harness -run TestWriteHTML -update if the change is intended", path)
}

func TestWriteHTMLGolden(t *testing.T) {
	r := samplePage()
	out := render(t, r)
	assert.Equal(t, out, render(t, samplePage()), "the page must depend only on the report")
	golden(t, "report.html.golden", out)
}

// byClass finds the elements under n carrying class c.
func byClass(n *html.Node, tag, c string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && (tag == "" || d.Data == tag) && slices.Contains(strings.Fields(attr(d, "class")), c) {
			out = append(out, d)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// text is the text under n, its pieces joined by single spaces.
func text(n *html.Node) string {
	var words []string
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			words = append(words, strings.Fields(d.Data)...)
		}
	}
	return strings.Join(words, " ")
}

func children(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := range n.ChildNodes() {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
	}
	return out
}

func TestWriteHTMLStructure(t *testing.T) {
	out := render(t, samplePage())
	doc, err := html.Parse(bytes.NewReader(out))
	require.NoError(t, err)

	ids := map[string]*html.Node{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		if id := attr(n, "id"); id != "" {
			require.NotContains(t, ids, id, "duplicate id")
			ids[id] = n
		}
		// Self-contained: nothing is fetched, nothing runs.
		assert.NotContains(t, []string{"script", "img", "iframe", "object", "embed", "video", "audio", "source"}, n.Data, "element <%s>", n.Data)
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			assert.NotContains(t, v, "://", "<%s %s=%q>: attributes must not point anywhere", n.Data, a.Key, a.Val)
			assert.False(t, strings.HasPrefix(v, "//"), "<%s %s=%q>", n.Data, a.Key, a.Val)
			assert.False(t, strings.HasPrefix(a.Key, "on"), "<%s %s>: no event handlers", n.Data, a.Key)
			switch a.Key {
			case "href", "src", "xlink:href", "action", "formaction", "poster", "srcset", "data":
				assert.True(t, strings.HasPrefix(v, "#") || v == "data:,", "<%s %s=%q>: only links inside the page", n.Data, a.Key, a.Val)
			case "style":
				assert.NotContains(t, v, "url(", "<%s style>", n.Data)
			}
		}
		if n.Data == "style" {
			css := text(n)
			assert.NotContains(t, css, "url(")
			assert.NotContains(t, css, "@import")
			assert.NotContains(t, css, "@font-face")
		}
	}
	// An http(s) address may only appear as text (here: in the preflight error).
	for _, m := range regexp.MustCompile(`https?://`).FindAllIndex(out, -1) {
		line := out[bytes.LastIndexByte(out[:m[0]], '\n')+1:]
		line = line[:bytes.IndexByte(line, '\n')]
		assert.Contains(t, string(line), `class="tool-error"`, "an address outside text: %s", line)
	}
	// Escaped, not interpreted.
	assert.Contains(t, string(out), "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.Contains(t, string(out), "&lt;b&gt;429&lt;/b&gt; &amp; &#34;retry later&#34;")

	// Header.
	summary := ids["summary"]
	require.NotNil(t, summary)
	assert.Equal(t, "4 tools, 1 agent-ready · 2 failures · 1 unknown", text(summary))
	head := text(byClass(doc, "dl", "meta")[0])
	assert.Contains(t, head, "v0.9.0-test")
	assert.Contains(t, head, "embedded")
	assert.Contains(t, head, "2026-11-29 09:21:45 UTC")

	// The matrix: columns are the union of scenario ids in first-seen order.
	tables := byClass(doc, "table", "matrix")
	require.Len(t, tables, 1)
	var heads []string
	for _, th := range children(children(children(tables[0], "thead")[0], "tr")[0], "th") {
		heads = append(heads, text(th))
	}
	assert.Equal(t, []string{"tool", "agent-ready", "lost-response", "pre-server-error", "concurrent-duplicate", "key-mismatch"}, heads)

	type cell struct{ word, trials, link string }
	rows := map[string][]cell{}
	ready := map[string]string{}
	var errCell *html.Node
	for _, tr := range children(children(tables[0], "tbody")[0], "tr") {
		tool := attr(tr, "data-tool")
		tds := children(tr, "td")
		ready[tool] = text(tds[0])
		for _, td := range tds[1:] {
			if slices.Contains(strings.Fields(attr(td, "class")), "tool-error") {
				errCell = td
				rows[tool] = append(rows[tool], cell{word: "error"})
				continue
			}
			c := cell{word: text(td)}
			if w := byClass(td, "span", "word"); len(w) == 1 {
				c.word = text(w[0])
				c.trials = text(byClass(td, "span", "trials")[0])
			}
			if as := children(td, "a"); len(as) == 1 {
				c.link = attr(as[0], "href")
			}
			rows[tool] = append(rows[tool], c)
		}
	}
	assert.Equal(t, map[string][]cell{
		"correct": {{"PASS", "10/10", ""}, {"PASS", "10/10", ""}, {"PASS", "10/10", ""}, {"PASS", "10/10", ""}},
		"naive": {
			{"FAIL", "1/1", "#fail-naive-lost-response"}, {"PASS", "10/10", ""},
			{"UNKNOWN", "2/10", "#fail-naive-concurrent-duplicate"}, {"—", "", ""},
		},
		"check-then-act": {
			{"PASS", "10/10", ""}, {"PASS", "10/10", ""},
			{"FAIL", "1/1", "#fail-check-then-act-concurrent-duplicate"}, {"PASS", "10/10", ""},
		},
		"broken": {{word: "error"}},
	}, rows)
	assert.Equal(t, map[string]string{
		"correct": "✓ agent-ready 1.086s", "naive": "NOT agent-ready 606ms",
		"check-then-act": "NOT agent-ready 633ms", "broken": "NOT agent-ready",
	}, ready)
	require.NotNil(t, errCell)
	assert.Equal(t, "4", attr(errCell, "colspan"), "the preflight error spans the row")
	assert.Contains(t, text(errCell), "preflight failed: unreachable: tool broken")

	// Every FAIL/UNKNOWN link lands on its section.
	for tool, cs := range rows {
		for _, c := range cs {
			if c.link == "" {
				continue
			}
			sec := ids[strings.TrimPrefix(c.link, "#")]
			require.NotNil(t, sec, "%s: no element with the id of %s", tool, c.link)
			assert.Equal(t, "section", sec.Data)
			assert.Equal(t, tool, attr(sec, "data-tool"))
		}
	}

	// The lost response's section: violation, plan, copyable replay, log, effects, picture.
	sec := ids["fail-naive-lost-response"]
	body := text(sec)
	assert.Contains(t, body, "2 effects for marker onceproof-bd93bfd6-m00000052, want exactly 1")
	assert.Contains(t, body, "lose-response/limit-data, then delivered after 0s, then a replay after 0s")
	repro := byClass(sec, "code", "repro")
	require.Len(t, repro, 1)
	assert.Equal(t, "onceproof demo --tool naive --scenario lost-response --seed 7057939659976774153 --checks 10", text(repro[0]))
	logs := byClass(sec, "table", "log")
	require.Len(t, logs, 2)
	assert.Len(t, children(children(logs[0], "tbody")[0], "tr"), 2)
	assert.Contains(t, text(logs[0]), "read response: unexpected EOF")
	assert.Contains(t, text(logs[1]), "1 too many")
	svg := byClass(sec, "svg", "timeline")
	require.Len(t, svg, 1)
	var lanes []string
	for _, g := range byClass(svg[0], "g", "lane") {
		lanes = append(lanes, text(byClass(g, "text", "lane-label")[0])+" | "+text(byClass(g, "text", "result")[0]))
	}
	assert.Equal(t, []string{
		"#1 op-51 lose-response/limit-data #1 op-51 lose-response/limit-data | unknown: EOF", // label + its <title>
		"#2 op-51 #2 op-51 | 201 t-57",
	}, lanes)
	assert.Len(t, byClass(svg[0], "g", "glyph-bolt"), 1, "the lost response is marked at the bar's end")
	assert.Equal(t, "duplicate", text(byClass(svg[0], "text", "note-over")[0]))

	// The inconclusive section has its reason and replay but no picture.
	unk := ids["fail-naive-concurrent-duplicate"]
	assert.Contains(t, attr(unk, "class"), "v-unknown")
	assert.Contains(t, text(unk), "only 2 of 10 trials had their fault fire")
	assert.Empty(t, byClass(unk, "svg", "timeline"))

	// Check-then-act: two overlapping held attempts, both 201 with distinct ids.
	race := byClass(ids["fail-check-then-act-concurrent-duplicate"], "svg", "timeline")
	require.Len(t, race, 1)
	var bars [][4]string
	for _, b := range byClass(race[0], "rect", "bar") {
		bars = append(bars, [4]string{attr(b, "data-start-ms"), attr(b, "data-end-ms"), attr(b, "data-status"), attr(b, "data-result-id")})
	}
	assert.Equal(t, [][4]string{
		{"0.022", "2.499", "201", "t-112"},
		{"0.070", "2.580", "201", "t-113"},
		{"2.651", "2.925", "201", "t-112"},
	}, bars)
	assert.Len(t, byClass(race[0], "g", "band"), 1, "the overlap is shaded")
	assert.Len(t, byClass(race[0], "g", "glyph-hold"), 2)
	eff := byClass(race[0], "g", "effects")
	require.Len(t, eff, 1)
	assert.Equal(t, "1", attr(eff[0], "data-want"))
	assert.Equal(t, "2", attr(eff[0], "data-max"))
	assert.Equal(t, "duplicate", text(byClass(eff[0], "text", "note-over")[0]))

	// Every timeline is well-formed XML too (it can be cut out as an .svg).
	svgs := regexp.MustCompile(`(?s)<svg class="timeline".*?</svg>`).FindAll(out, -1)
	require.Len(t, svgs, 2)
	for _, s := range svgs {
		dec := xml.NewDecoder(bytes.NewReader(s))
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s", s)
		}
	}
}

func TestHTMLSteps(t *testing.T) {
	r := samplePage()
	type step struct {
		ms       string
		v        int
		inferred bool
	}
	steps := func(c *report.Counterexample) []step {
		var out []step
		var end time.Duration
		for _, a := range c.Attempts {
			end = max(end, a.End)
		}
		for _, s := range steps(c, c.Effects[0].Marker, &c.Effects[0], end) {
			out = append(out, step{fmt.Sprintf("%.3f", float64(s.t)/1e6), s.v, s.inferred})
		}
		return out
	}
	// Read before and after each sequential attempt: the count steps when the
	// oracle saw it.
	assert.Equal(t, []step{{"0.000", 0, false}, {"3.737", 1, false}, {"6.127", 2, false}},
		steps(r.Tools[1].Scenarios[0].Counterexample))
	// Not read during the overlap: 0 before, 2 after; one step at the end of
	// each of the two fresh 201s.
	assert.Equal(t, []step{{"0.000", 0, false}, {"2.499", 1, true}, {"2.580", 2, true}},
		steps(r.Tools[2].Scenarios[2].Counterexample))

	// A change no unread attempt explains steps at the reading that saw it.
	c := &report.Counterexample{
		Attempts: []report.Attempt{
			{N: 1, Fault: "hold", Phase: report.PhaseHeld, Start: time.Millisecond, End: 2 * time.Millisecond, Outcome: report.Unknown, Before: -1, After: -1},
			{N: 2, Start: 3 * time.Millisecond, End: 4 * time.Millisecond, Outcome: report.OK, Status: 201, ResultID: "a", Before: 2, After: 2},
		},
		Effects: []report.Effect{{Count: 2, Want: 1}},
	}
	assert.Equal(t, []step{{"0.000", 0, false}, {"2.000", 1, true}, {"3.000", 2, false}}, steps(c))
}

func TestHTMLTicksAndIDs(t *testing.T) {
	assert.InDelta(t, 0.5, niceStep(2.925), 1e-12)
	assert.InDelta(t, 2, niceStep(6.127), 1e-12)
	assert.InDelta(t, 2.5, niceStep(14), 1e-12)
	assert.InDelta(t, 500, niceStep(2900), 1e-9)
	assert.Equal(t, "0.25", formatMs(0.25, 0.25))
	assert.Equal(t, "1.5", formatMs(1.5, 0.5))
	assert.Equal(t, "2000", formatMs(2000, 500))

	used := map[string]bool{}
	assert.Equal(t, "fail-a-b-c", uniqueID(used, "fail-"+sanitize("a b")+"-"+sanitize("c")))
	assert.Equal(t, "fail-a-b-c-2", uniqueID(used, "fail-"+sanitize("a")+"-"+sanitize("b/c")))
	assert.Equal(t, "fail-x---y-z", uniqueID(used, "fail-"+sanitize(`x<">y`)+"-z"))

	for _, tc := range []struct {
		a      report.Attempt
		want   string
		reason string
	}{
		{report.Attempt{Failure: report.FailureEOF, Error: "read response: unexpected EOF"}, "EOF", "the label comes from the typed failure"},
		{report.Attempt{Failure: report.FailureRefused, Error: "anything"}, "refused", "not from the error's text"},
		{report.Attempt{Failure: report.FailureTimeout}, "timeout", "a deadline"},
		{report.Attempt{Failure: report.FailureGaveUp}, "gave up", "a caller that gave up"},
		{report.Attempt{Error: "read response: unexpected EOF"}, "error", "a record without a failure kind (an older report) is an error"},
		{report.Attempt{}, "no response", "nothing known"},
	} {
		assert.Equal(t, tc.want, shortErr(tc.a), tc.reason)
	}
}

// chromium is where Debian's chromium package installs the browser.
const chromium = "/usr/bin/chromium"

// bar is a timeline bar as the browser lays it out.
type bar struct {
	N      int     `json:"n"`
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	Status int     `json:"status"`
	Result string  `json:"result"`
	Left   float64 `json:"left"`
	Right  float64 `json:"right"`
	Top    float64 `json:"top"`
}

// TestWriteHTMLBrowser opens the page in headless Chromium: it must load
// without console errors, its links must land on the failures, the
// check-then-act timeline must show the two overlapping commits and the count
// rising above want, and the layout must match the golden screenshot.
func TestWriteHTMLBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		// The page is checked in a real browser where one exists; CI
		// installs one (.ci/run), so there a missing browser is a failure.
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no Chromium at %s: apt-get install chromium (%v)", chromium, err)
		}
		t.Skipf("no Chromium at %s, so the page is not checked in a browser (apt-get install chromium)", chromium)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(page, render(t, samplePage()), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // we run as root in CI
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1600),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.Flag("font-render-hinting", "none"),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()

	var mu sync.Mutex
	var problems, seen []string
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			msg := fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
			seen = append(seen, msg)
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				problems = append(problems, msg)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := "exception: " + d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, msg)
		case *log.EventEntryAdded:
			msg := fmt.Sprintf("log %s/%s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
			seen = append(seen, msg)
			if ev.Entry.Level == log.EntryLevelError {
				problems = append(problems, msg)
			}
		}
	}))
	defer bcancel()

	_, err := chromedp.Call(bctx, log.Enable, cdp.Empty{})
	require.NoError(t, err, "start chromium at %s", chromium)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.EmulateViewport(1280, 1600, chromedp.EmulateScale(1)),
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible(chromedp.CSS("svg.timeline")),
	))
	title, err := chromedp.Run(bctx, chromedp.Title())
	require.NoError(t, err)
	assert.Equal(t, "onceproof report: 1 of 4 tools agent-ready", title)

	// The golden screenshot, before anything scrolls or gets a :target.
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	compareScreenshot(t, shot)

	// The failing cell's link lands on the section, which holds the timeline.
	const id = "fail-check-then-act-concurrent-duplicate"
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`table.matrix a[href="#`+id+`"]`))))
	type landing struct {
		Hash    string  `json:"hash"`
		Target  string  `json:"target"`
		SVGs    int     `json:"svgs"`
		Top     float64 `json:"top"`
		Height  float64 `json:"height"`
		ScrollY float64 `json:"scrollY"`
	}
	land, err := chromedp.Run(bctx, chromedp.Poll[landing](`(() => {
		const t = document.querySelector(':target');
		if (!t) return false;
		return {hash: location.hash, target: t.id, svgs: t.querySelectorAll('svg').length,
			top: t.getBoundingClientRect().top, height: window.innerHeight, scrollY: window.scrollY};
	})()`, chromedp.WithPollingTimeout(5*time.Second)))
	require.NoError(t, err)
	assert.Equal(t, "#"+id, land.Hash)
	assert.Equal(t, id, land.Target)
	assert.Positive(t, land.SVGs, "the section has a timeline picture")
	assert.Positive(t, land.ScrollY, "the click scrolled down to the section")
	assert.True(t, land.Top >= 0 && land.Top < land.Height/2, "the section is in view: top %v of %v", land.Top, land.Height)

	// Two lanes whose 201 bars overlap, in time and on screen.
	bars, err := chromedp.Run(bctx, chromedp.Evaluate[[]bar](`[...document.querySelectorAll('#`+id+` svg.timeline rect.bar')].map(r => {
		const b = r.getBoundingClientRect();
		return {n: +r.dataset.n, start: +r.dataset.startMs, end: +r.dataset.endMs, status: +r.dataset.status,
			result: r.dataset.resultId, left: b.left, right: b.right, top: b.top};
	})`))
	require.NoError(t, err)
	require.Len(t, bars, 3)
	a, b := bars[0], bars[1]
	assert.Equal(t, []int{201, 201}, []int{a.Status, b.Status})
	assert.NotEqual(t, a.Result, b.Result, "two commits, two result ids")
	assert.True(t, a.Start < b.End && b.Start < a.End, "the held attempts overlap in time: %+v %+v", a, b)
	assert.True(t, a.Left < b.Right && b.Left < a.Right, "and on screen: %+v %+v", a, b)
	assert.Greater(t, b.Top-a.Top, 10.0, "in separate lanes")
	results, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#`+id+` svg.timeline text.result')].map(t => t.textContent)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"201 t-112", "201 t-113", "201 t-112"}, results, "both 2xx answers are written on the picture")

	// The effect count climbs to 2, drawn above the want line of 1, in red.
	type effects struct {
		Want      int      `json:"want"`
		Max       int      `json:"max"`
		WantY     float64  `json:"wantY"`
		OverY     float64  `json:"overY"`
		OverColor string   `json:"overColor"`
		Classes   []string `json:"classes"`
		Note      string   `json:"note"`
	}
	eff, err := chromedp.Run(bctx, chromedp.Evaluate[effects](`(() => {
		const g = document.querySelector('#`+id+` svg.timeline g.effects');
		const mid = el => { const r = el.getBoundingClientRect(); return (r.top + r.bottom) / 2; };
		const top = [...g.querySelectorAll('line.step')].filter(l => +l.dataset.count === 2 && l.classList.contains('level'));
		return {want: +g.dataset.want, max: +g.dataset.max, wantY: mid(g.querySelector('line.want')),
			overY: mid(top[0]), overColor: getComputedStyle(top[0]).stroke,
			classes: top.map(l => l.getAttribute('class')), note: g.querySelector('text.note-over').textContent};
	})()`))
	require.NoError(t, err)
	assert.Equal(t, 1, eff.Want)
	assert.Equal(t, 2, eff.Max)
	assert.Less(t, eff.OverY, eff.WantY-10, "the count of 2 is drawn above the want line")
	assert.Equal(t, "rgb(211, 47, 47)", eff.OverColor, "the step above want is red")
	assert.Equal(t, "duplicate", eff.Note)

	mu.Lock()
	assert.Empty(t, problems, "console errors or exceptions (all messages: %q)", seen)
	mu.Unlock()

	// The listener does catch what it guards against: a page with a console
	// error, an exception and a missing resource trips all three.
	bad := filepath.Join(dir, "bad.html")
	require.NoError(t, os.WriteFile(bad, []byte(`<!DOCTYPE html><title>bad</title><img src="missing.png" alt=""><script>console.error("planted error"); null.boom;</script>`), 0o644))
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("file://"+bad)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := slices.Clone(problems)
		mu.Unlock()
		joined := strings.Join(got, "\n")
		if strings.Contains(joined, "planted error") && strings.Contains(joined, "exception") && strings.Contains(joined, "missing.png") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console listener missed the planted problems; it saw %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compareScreenshot compares a PNG with testdata/html/report.png, with a
// tolerance: fonts and anti-aliasing differ a little between Chromium builds,
// so up to 2% of the pixels may differ by more than 48 in some channel.
func compareScreenshot(t *testing.T, shot []byte) {
	t.Helper()
	path := filepath.Join("testdata", "html", "report.png")
	got, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	if *update {
		var b bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		require.NoError(t, enc.Encode(&b, got))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		return
	}
	f, err := os.Open(path)
	require.NoError(t, err, "run go test ./harness -run TestWriteHTMLBrowser -update to create it")
	defer f.Close()
	want, err := png.Decode(f)
	require.NoError(t, err)

	keep := func() string {
		p := filepath.Join(os.TempDir(), "onceproof-report-actual.png")
		if err := os.WriteFile(p, shot, 0o644); err != nil {
			return err.Error()
		}
		return p
	}
	if got.Bounds() != want.Bounds() {
		t.Fatalf("screenshot is %v, golden %s is %v (actual saved to %s); run go test ./harness -run TestWriteHTMLBrowser -update if the layout change is intended",
			got.Bounds().Size(), path, want.Bounds().Size(), keep())
	}
	diff := differingPixels(got, want, 48)
	total := got.Bounds().Dx() * got.Bounds().Dy()
	if float64(diff) > 0.02*float64(total) {
		t.Fatalf("screenshot differs from %s in %d of %d pixels (%.2f%%, limit 2%%; actual saved to %s); run go test ./harness -run TestWriteHTMLBrowser -update if the change is intended",
			path, diff, total, 100*float64(diff)/float64(total), keep())
	}
	t.Logf("screenshot: %d of %d pixels differ from the golden one", diff, total)
}

// differingPixels counts the pixels of a and b (same bounds) that differ by
// more than threshold (0-255) in some channel.
func differingPixels(a, b image.Image, threshold int) int {
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			for _, d := range [4][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
				if abs(int(d[0]>>8)-int(d[1]>>8)) > threshold {
					n++
					break
				}
			}
		}
	}
	return n
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TestWriteHTMLOddShapes renders counterexamples the main report lacks: no
// attempts at all, attempts without a marker, request, dependency and crash
// faults, an effect below want, and an empty report.
func TestWriteHTMLOddShapes(t *testing.T) {
	ms := time.Millisecond
	r := &report.Report{Tools: []report.ToolReport{{
		Name: "odd tool/β",
		Scenarios: []report.ScenarioReport{
			{ID: "empty", Verdict: report.Fail, Counterexample: &report.Counterexample{Plan: "nothing", Violation: "no attempts"}},
			{ID: "crash-restart", Verdict: report.Fail, Counterexample: &report.Counterexample{
				Attempts: []report.Attempt{
					{N: 1, Fault: "fail-before-server/reset-peer", Phase: report.PhaseBeforeServer, Start: 0, End: ms, Outcome: report.Failed, Error: "dial: connect: connection refused", Failure: report.FailureRefused, Before: 0, After: 0},
					{N: 2, Fault: "cut-connection/upstream/12-bytes on postgres", Phase: report.PhaseDependency, Start: 2 * ms, End: 30 * ms, Outcome: report.Unknown, Error: "timeout after 25ms: i/o timeout", Failure: report.FailureTimeout, Before: 0, After: 1},
					{N: 3, Fault: "container killed (SIGKILL) and restarted", Phase: report.PhaseCrash, Start: 31 * ms, End: 900 * ms, Before: 1, After: 1},
					{N: 4, Fault: "torn-request/10-bytes", Phase: report.PhaseTorn, Start: 901 * ms, End: 902 * ms, Outcome: report.OK, Status: 500, Before: 1, After: 3},
				},
				Effects: []report.Effect{{Count: 3, Want: 1}},
			}},
			{ID: "crash-restart", Verdict: report.Fail, Counterexample: &report.Counterexample{
				Attempts: []report.Attempt{{N: 1, Marker: "m-1", Start: ms, End: 2 * ms, Outcome: report.OK, Status: 201, Before: 0, After: 1}},
				Effects:  []report.Effect{{Marker: "m-1", Count: 1, Want: 2}},
			}},
		},
	}}}
	out := render(t, r)
	s := string(out)
	assert.Contains(t, s, `id="fail-odd-tool---empty"`)
	assert.Contains(t, s, `id="fail-odd-tool---crash-restart"`)
	assert.Contains(t, s, `id="fail-odd-tool---crash-restart-2"`, "colliding ids get a suffix")
	for _, g := range []string{"glyph-cross", "glyph-dep", "glyph-crash"} {
		assert.Contains(t, s, g)
	}
	assert.Contains(t, s, "failed: refused")
	assert.Contains(t, s, "unknown: timeout")
	assert.Contains(t, s, "restarted, 1 survived")
	assert.Contains(t, s, "1 effect, want 2: missing")
	for _, m := range regexp.MustCompile(`(?s)<svg class="timeline".*?</svg>`).FindAll(out, -1) {
		dec := xml.NewDecoder(bytes.NewReader(m))
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s", m)
		}
		assert.NotContains(t, string(m), "NaN")
		assert.NotContains(t, string(m), "Inf")
	}

	empty := string(render(t, &report.Report{}))
	assert.Contains(t, empty, "0 tools, 0 agent-ready")
}

// TestTimelineLaneLabels: the replica that served each attempt, and where
// an outbound attempt went with which key, show in the timeline's lane
// labels.
func TestTimelineLaneLabels(t *testing.T) {
	c := &report.Counterexample{Plan: "p", Violation: "v", Attempts: []report.Attempt{
		{N: 1, Op: "op-x-00000001", Outcome: report.OK, Status: 201, Replica: 2, Before: 0, After: 1, End: time.Millisecond},
		{N: 2, Op: "op-x-00000001", Outcome: report.Unknown, Link: "payments", Key: "charge-0123456789abcdef", Fault: "lose-response (the provider did the work)", Before: 0, After: 1, Start: time.Millisecond, End: 2 * time.Millisecond},
		{N: 3, Op: "op-x-00000001", Outcome: report.OK, Status: 201, Link: "payments", Before: 1, After: 2, Start: 2 * time.Millisecond, End: 3 * time.Millisecond},
	}}
	tl := buildTimeline(c, "")
	assert.Contains(t, tl.Lanes[0].FullLabel, "replica 2")
	assert.Contains(t, tl.Lanes[1].FullLabel, "→ payments key charge-012…")
	assert.Contains(t, tl.Lanes[2].FullLabel, "→ payments (no key)")

	polls := &report.Counterexample{Plan: "p", Violation: "v", Rule: report.RuleStatusPoll, Attempts: []report.Attempt{
		{N: 1, Op: "op-x-00000001", Outcome: report.OK, Status: 202, Before: 0, After: 1, End: time.Millisecond},
		{N: 2, Op: "op-x-00000001", Outcome: report.OK, Status: 404, Poll: "not-found", Before: -1, After: -1, Start: time.Millisecond, End: 2 * time.Millisecond},
	}}
	tl = buildTimeline(polls, "")
	assert.NotContains(t, tl.Lanes[0].FullLabel, "status poll", "the trigger")
	assert.Contains(t, tl.Lanes[1].FullLabel, "status poll: not-found")
}

func TestLintHTML(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, reporttest.Lint(t, lint.Error)))
	doc, err := html.Parse(&b)
	require.NoError(t, err)
	assert.Empty(t, byClass(doc, "table", "matrix"), "a lint report has no verdict matrix")
	rows := byClass(doc, "tr", "sev-error")
	rows = append(rows, byClass(doc, "tr", "sev-warning")...)
	var got []string
	for _, r := range rows {
		got = append(got, attr(r, "data-tool")+"/"+attr(r, "data-rule"))
	}
	slices.Sort(got)
	assert.Equal(t, []string{"create_payment/key-minted-per-call", "create_payment/key-optional", "get-writer/http-key-in-request-id-header", "get-writer/http-safe-method"}, got)
	assert.Len(t, byClass(doc, "tr", "fails"), 2, "the errors reach --fail-on error")
	text := text(doc)
	assert.Contains(t, text, "No findings: create-ticket.")
	assert.Contains(t, text, "offline was not linted")
	assert.Contains(t, text, "Why these rules")
}

// TestCertifyPageCarriesLint: a certification's page shows the lint without
// changing a verdict.
func TestCertifyPageCarriesLint(t *testing.T) {
	r := reporttest.Sample()
	r.Tools[0].Lint = reporttest.Lint(t, lint.Never).Tools[0].Lint
	r.Tools[0].Finish()
	var page bytes.Buffer
	require.NoError(t, Write(&page, r))
	assert.Contains(t, page.String(), `id="lint"`)
	assert.Contains(t, page.String(), `id="matrix"`)
	assert.NotContains(t, page.String(), `class="sev-error fails"`, "advice only: nothing fails")
}

// TestContractHTMLGolden pins the page of a run under a declared contract
// (go test -update rewrites it).
func TestContractHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, reporttest.Contracted(t)))
	for _, w := range []string{`<span class="tool-contract">profile ietf`, `<span class="rule" title="the rule broken">replay-fidelity</span>`,
		"201 t-7 · replayed", "<th>headers</th>", "keys ≥2.4s"} {
		assert.Contains(t, b.String(), w)
	}
	path := filepath.Join("testdata", "contract.html.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), b.String())
}
