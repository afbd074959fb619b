package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// junitSuites is the JUnit XML root most CI systems read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML: one testsuite per tool, one testcase per
// scenario, and one per lint rule checked (failed when a finding of the rule
// reaches the lint's fail-on threshold). A failure carries the shrunk counterexample and the command that
// replays it; an inconclusive scenario, or a tool that failed its preflight,
// is an error (never a pass).
func (r *Report) WriteJUnit(w io.Writer) error {
	root := junitSuites{Name: "onceproof"}
	var total float64
	for _, t := range r.Tools {
		s := junitSuite{Name: t.Name, Time: seconds(t.Duration.Seconds())}
		if !r.Started.IsZero() {
			s.Timestamp = r.Started.Format("2006-01-02T15:04:05")
		}
		if r.Kind != KindLint {
			s.Properties = []junitProperty{{Name: "agent_ready", Value: fmt.Sprint(t.AgentReady)}, {Name: "toxiproxy", Value: r.Toxiproxy}}
			if t.Contract != nil {
				s.Properties = append(s.Properties, junitProperty{Name: "profile", Value: string(t.Contract.Profile)},
					junitProperty{Name: "contract", Value: t.Contract.Summary()})
			}
		}
		if t.Error != "" {
			s.Cases = append(s.Cases, junitCase{Name: "preflight", Classname: "onceproof." + t.Name, Time: "0",
				Error: &junitProblem{Message: firstLine(t.Error), Type: "preflight", Body: t.Error}})
			s.Errors++
		}
		for _, sc := range t.Scenarios {
			c := junitCase{Name: sc.ID, Classname: "onceproof." + t.Name, Time: seconds(sc.Duration.Seconds()),
				SystemOut: fmt.Sprintf("%s, %s, seed %d", Plural(sc.Checks, "check"), Plural(sc.ValidTrials, "valid trial"), sc.Seed)}
			if d := sc.Depth(); d != "" {
				c.SystemOut += "; " + d
			}
			if h := sc.Honoured(); h != "" {
				c.SystemOut += "; " + h
			}
			switch {
			case sc.Verdict == Fail && sc.Baseline == BaselineKnown:
				c.SystemOut += "\nknown failure (baseline): " + sc.Reason
			case sc.Verdict == Fail:
				c.Failure = &junitProblem{Message: firstLine(sc.Reason), Type: failureType(sc), Body: failureBody(sc)}
				s.Failures++
			case sc.Verdict == Inconclusive:
				c.Error = &junitProblem{Message: firstLine(sc.Reason), Type: "inconclusive", Body: sc.Reason}
				s.Errors++
			case sc.Baseline == BaselineStale:
				c.Failure = &junitProblem{Message: "stale baseline entry: this scenario passes now", Type: "stale-baseline",
					Body: "remove " + t.Name + " / " + sc.ID + " from the baseline"}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		lintCases, lintFailures := lintJUnitCases(t)
		s.Cases = append(s.Cases, lintCases...)
		s.Failures += lintFailures
		s.Tests = len(s.Cases)
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		total += t.Duration.Seconds()
		root.Suites = append(root.Suites, s)
	}
	root.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failureType is the JUnit failure type: the rule the counterexample broke
// (exactly-once when it names none).
func failureType(sc ScenarioReport) string {
	if sc.Counterexample != nil && sc.Counterexample.Rule != "" {
		return string(sc.Counterexample.Rule)
	}
	return string(RuleExactlyOnce)
}

// failureBody is a failure's evidence as plain text.
func failureBody(sc ScenarioReport) string {
	var b strings.Builder
	if sc.Counterexample != nil {
		b.WriteString(sc.Counterexample.String())
	}
	if sc.Repro != "" {
		fmt.Fprintf(&b, "replay: %s\n", sc.Repro)
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
