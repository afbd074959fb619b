package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// ReportVersion is the version of the JSON report format.
const ReportVersion = 1

// Verdict is a scenario's three-valued result.
type Verdict string

const (
	// Pass means exactly-once held in every valid trial and enough trials
	// were valid.
	Pass Verdict = "ok"
	// Fail means a trial broke exactly-once (or a hygiene rule); the
	// counterexample shows how.
	Fail Verdict = "failed"
	// Inconclusive means the harness could not tell: too few trials had
	// their fault fire, or the harness itself hit an error.
	Inconclusive Verdict = "unknown"
)

// Report is the outcome of certifying one or more tools.
type Report struct {
	Version int `json:"version"`
	// Kind is KindLint for the report of onceproof lint, whose tools have
	// lint results and no scenarios; "" for a certification.
	Kind      string    `json:"kind,omitempty"`
	Onceproof string    `json:"onceproof"`
	Toxiproxy string    `json:"toxiproxy"`
	Started   time.Time `json:"started"`
	// Run identifies the run (and the shard) a certification report is of.
	Run   *RunInfo     `json:"run,omitempty"`
	Tools []ToolReport `json:"tools"`
}

// ToolReport is one tool's verdicts.
type ToolReport struct {
	Name string `json:"name"`
	// AgentReady is true when every scenario that ran passed.
	AgentReady bool `json:"agent_ready"`
	// Error is set when the tool could not be certified at all (preflight).
	Error     string           `json:"error,omitempty"`
	Scenarios []ScenarioReport `json:"scenarios"`
	// ToolVersion, Image and ImageDigest identify the build that was
	// certified, when known (a container tool's image and its digest).
	ToolVersion string `json:"tool_version,omitempty"`
	Image       string `json:"image,omitempty"`
	ImageDigest string `json:"image_digest,omitempty"`
	// Line is the line of the tool's entry in the spec (Run.Spec), when
	// it came from one: where annotations and code scanning point.
	Line int `json:"line,omitempty"`
	// Startup is how long the tool's containers took to be ready (0 for a
	// tool that was already running); Duration runs from their start to the
	// verdict.
	Startup  time.Duration `json:"startup_ns,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Lint is what the lint found in what the model reads about the tool
	// (nil when it did not run). It never changes AgentReady.
	Lint *LintResult `json:"lint,omitempty"`
	// Contract is the idempotency contract the tool was judged by (its
	// profile's codes, retention, what replays must repeat); nil for
	// reports that predate it and for agent-side wrappers.
	Contract *Contract `json:"contract,omitempty"`
	// ServerLog is the end of what the tool's own server processes wrote
	// on standard error (a stdio MCP server onceproof started; bounded).
	ServerLog string `json:"server_log,omitempty"`
}

// ScenarioReport is one scenario's verdict with its evidence.
type ScenarioReport struct {
	ID      string  `json:"id"`
	Passed  bool    `json:"passed"`
	Verdict Verdict `json:"verdict"`
	// Checks is how many trials ran before the verdict (up to the first
	// failure); ValidTrials is how many of them had their fault fire.
	Checks      int    `json:"checks"`
	ValidTrials int    `json:"valid_trials"`
	Seed        uint64 `json:"seed"`
	// RuledOut is, for a pass, the per-trial failure rate the search rules
	// out at 95% confidence: a tool that failed that often (or more) would
	// have failed one of the valid trials with 95% probability (about
	// 3 / valid trials; see [RuledOut]).
	RuledOut float64 `json:"ruled_out_rate,omitempty"`
	// Reason explains a failed or unknown verdict in one line.
	Reason         string          `json:"reason,omitempty"`
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	Repro          string          `json:"repro,omitempty"`
	Duration       time.Duration   `json:"duration_ns"`
	// Baseline is "known-failure" or "stale" when a baseline lists this
	// scenario (see Baseline.Apply).
	Baseline string `json:"baseline,omitempty"`
	// LongestDelay is, for the retention scenario, the longest wait between
	// a first answer and its retry that a passing trial checked: the tool
	// honoured keys for at least that long.
	LongestDelay time.Duration `json:"longest_delay_ns,omitempty"`
}

// Counterexample is the smallest failing trial found: its plan, what went
// wrong and every attempt it made.
type Counterexample struct {
	Plan      string `json:"plan"`
	Violation string `json:"violation"`
	// Rule names the rule the violation broke ("" for agent-side checks,
	// whose scenario id names it).
	Rule Rule `json:"rule,omitempty"`
	// Shrink says when the case is not the fully shrunk one ("" when it
	// is): the shrink time ran out, the run was interrupted, or replaying
	// its seed did not fail again.
	Shrink   string    `json:"shrink,omitempty"`
	Attempts []Attempt `json:"attempts"`
	Effects  []Effect  `json:"effects"`
	// Requests are the distinct requests the attempts sent (see
	// Attempt.Request).
	Requests []Request `json:"requests,omitempty"`
}

// Effect is the oracle's final count for one marker against what exactly-once
// requires.
type Effect struct {
	Marker string `json:"marker"`
	Count  int    `json:"count"`
	Want   int    `json:"want"`
	// CountURL is where an HTTP oracle Counts this marker's effects.
	CountURL string `json:"count_url,omitempty"`
}

// RuledOut is the per-trial failure rate that valid passing trials rule out
// at 95% confidence: the p with (1-p)^valid = 0.05, about 3/valid (the
// rule of three). 0 for no trials.
func RuledOut(valid int) float64 {
	if valid <= 0 {
		return 0
	}
	return 1 - math.Pow(0.05, 1/float64(valid))
}

// Depth describes a pass's search depth in words: "rules out a per-trial
// failure rate of 3.0% or more (95% confidence)".
func (s ScenarioReport) Depth() string {
	if s.RuledOut <= 0 {
		return ""
	}
	return fmt.Sprintf("rules out a per-trial failure rate of %s or more (95%% confidence)", Percent(s.RuledOut))
}

// Honoured says what a retention pass showed: "keys honoured for at least
// 2.4s (the longest delay checked)" ("" when nothing was measured).
func (s ScenarioReport) Honoured() string {
	if s.LongestDelay <= 0 {
		return ""
	}
	return fmt.Sprintf("keys honoured for at least %s (the longest delay checked)", Round(s.LongestDelay))
}

// Percent renders a rate as a percentage with two significant digits.
func Percent(rate float64) string {
	p := rate * 100
	switch {
	case p >= 10:
		return fmt.Sprintf("%.0f%%", p)
	case p >= 1:
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.2g%%", p)
}

// Plural writes n and noun, adding an s unless n is 1: "1 check", "3 checks".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Finish sets AgentReady from the scenarios.
func (t *ToolReport) Finish() {
	t.AgentReady = t.Error == "" && len(t.Scenarios) > 0
	for _, s := range t.Scenarios {
		if s.Verdict != Pass {
			t.AgentReady = false
		}
	}
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for people: a verdict line per tool and scenario, and
// for each failure its counterexample and the command that replays it.
func (r *Report) WriteText(w io.Writer) error { return r.WriteTextColor(w, false) }

// ANSI colours for WriteTextColor.
const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

// WriteTextColor is WriteText with ANSI colours when color is set (for a
// terminal that did not ask for NO_COLOR).
func (r *Report) WriteTextColor(w io.Writer, color bool) error {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	if r.Kind == KindLint {
		writeLintReportText(&b, r, paint)
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, t := range r.Tools {
		status := paint(ansiGreen+ansiBold, "agent-ready")
		if !t.AgentReady {
			status = paint(ansiRed+ansiBold, "NOT agent-ready")
		}
		fmt.Fprintf(&b, "%s: %s", t.Name, status)
		if t.Startup > 0 {
			fmt.Fprintf(&b, " (containers ready in %s, verdict after %s)", Round(t.Startup), Round(t.Duration))
		}
		b.WriteString("\n")
		if t.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", t.Error)
		}
		if t.Contract != nil {
			fmt.Fprintf(&b, "  contract: %s\n", t.Contract.Summary())
		}
		for _, s := range t.Scenarios {
			word := fmt.Sprintf("%-7s", verdictWord(s.Verdict))
			switch {
			case s.Baseline == BaselineKnown:
				word = paint(ansiDim, word)
			case s.Verdict == Pass:
				word = paint(ansiGreen, word)
			case s.Verdict == Fail:
				word = paint(ansiRed, word)
			default:
				word = paint(ansiYellow, word)
			}
			fmt.Fprintf(&b, "  %-22s %s %s, %s, seed %d", s.ID, word, Plural(s.Checks, "check"), Plural(s.ValidTrials, "valid trial"), s.Seed)
			if d := s.Depth(); d != "" {
				b.WriteString("; " + d)
			}
			if h := s.Honoured(); h != "" {
				b.WriteString("; " + h)
			}
			switch s.Baseline {
			case BaselineKnown:
				b.WriteString(" (known failure: baseline)")
			case BaselineStale:
				b.WriteString(paint(ansiYellow, " (STALE baseline entry: it passes now, remove it)"))
			}
			b.WriteString("\n")
			if s.Reason != "" {
				fmt.Fprintf(&b, "    %s\n", s.Reason)
			}
			if s.Counterexample != nil {
				s.Counterexample.write(&b, "    ")
			}
			if s.Repro != "" && s.Verdict == Fail {
				fmt.Fprintf(&b, "    replay: %s\n", s.Repro)
			}
		}
		writeToolLintText(&b, t.Lint, paint)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func verdictWord(v Verdict) string {
	switch v {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	}
	return "UNKNOWN"
}

// String renders the counterexample as an attempt log.
func (c *Counterexample) String() string {
	var b strings.Builder
	c.write(&b, "")
	return b.String()
}

func (c *Counterexample) write(b *strings.Builder, indent string) {
	fmt.Fprintf(b, "%splan: %s\n", indent, c.Plan)
	if c.Rule != "" {
		fmt.Fprintf(b, "%sviolation (%s): %s\n", indent, c.Rule, c.Violation)
	} else {
		fmt.Fprintf(b, "%sviolation: %s\n", indent, c.Violation)
	}
	if c.Shrink != "" {
		fmt.Fprintf(b, "%s(%s)\n", indent, c.Shrink)
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	cols := attemptColumns(c.Attempts)
	fmt.Fprintf(tw, "%s#\top\t%sfault\tdelay\tat\tgave up\toutcome\tstatus\tresult_id\teffects\t\n", indent, cols.header())
	for _, a := range c.Attempts {
		fmt.Fprintf(tw, "%s%d\t%s\t%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", indent, a.N, ShortOp(a.Op), cols.cells(a), Dash(a.Fault),
			Round(a.Delay), Round(a.Start), a.GaveUp(), a.Outcome, DashInt(a.Status), Dash(a.ResultID), Counts(a.Before, a.After))
	}
	_ = tw.Flush()
	if c.Rule.AboutAnswers() {
		for _, a := range c.Attempts {
			if h := a.HeaderText(); h != "" {
				fmt.Fprintf(b, "%s#%d headers: %s\n", indent, a.N, h)
			}
		}
	}
	for _, e := range c.Effects {
		fmt.Fprintf(b, "%seffects for %s: %d (want %d)\n", indent, e.Marker, e.Count, e.Want)
	}
}

// ShortOp drops the run nonce from an operation id ("op-1a2b3c4d-00000007" → "op-7").
func ShortOp(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return id
	}
	return "op-" + strings.TrimLeft(id[i+1:], "0")
}

func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func DashInt(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func Counts(before, after int) string {
	if before < 0 && after < 0 {
		return "-"
	}
	if before < 0 {
		return fmt.Sprintf("→%d", after)
	}
	return fmt.Sprintf("%d→%d", before, after)
}

// Round spells d for people: microseconds below a millisecond, milliseconds
// above.
func Round(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// ReadReport reads a JSON report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	if r.Version != ReportVersion {
		return nil, fmt.Errorf("report %s: version %d, want %d", path, r.Version, ReportVersion)
	}
	return &r, nil
}

// FormatDuration spells d without zero units: "1h", "10m", "1m30s", "250ms".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// The marks a baseline leaves on a scenario report (ScenarioReport.Baseline).
const (
	// BaselineKnown marks a failure the baseline lists: it does not fail the
	// run.
	BaselineKnown = "known-failure"
	// BaselineStale marks a baseline entry whose scenario passes now: it
	// fails the run until the entry is removed, so the baseline only shrinks.
	BaselineStale = "stale"
)
