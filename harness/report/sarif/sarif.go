package sarif

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/onceproof/onceproof/harness/report"
)

// Version and Schema are the SARIF version written and its schema's URI.
const (
	Version = "2.1.0"
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// InformationURI is onceproof's home, the driver's informationUri.
const InformationURI = "https://github.com/onceproof/onceproof"

// Log is a SARIF log (the subset onceproof writes).
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of one tool.
type Run struct {
	Tool    Tool     `json:"tool"`
	Results []Result `json:"results"`
	// AutomationDetails.ID tells runs of different kinds apart (code
	// scanning keeps one set of alerts per category).
	AutomationDetails *AutomationDetails `json:"automationDetails,omitempty"`
}

// AutomationDetails identifies a run's category.
type AutomationDetails struct {
	ID string `json:"id"`
}

// Tool is the analysis tool.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver describes onceproof and its rules.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	SemanticVer    string `json:"semanticVersion,omitempty"`
	InformationURI string `json:"informationUri"`
	Rules          []Rule `json:"rules"`
}

// Rule is a reportingDescriptor.
type Rule struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name,omitempty"`
	ShortDescription     Text          `json:"shortDescription"`
	FullDescription      *Text         `json:"fullDescription,omitempty"`
	Help                 *Text         `json:"help,omitempty"`
	HelpURI              string        `json:"helpUri,omitempty"`
	DefaultConfiguration Configuration `json:"defaultConfiguration"`
	Properties           *Properties   `json:"properties,omitempty"`
}

// Configuration is a rule's default level.
type Configuration struct {
	Level string `json:"level"`
}

// Properties are a rule's tags (code scanning shows them).
type Properties struct {
	Tags []string `json:"tags,omitempty"`
}

// Text is a message.
type Text struct {
	Text string `json:"text"`
}

// Result is one problem.
type Result struct {
	RuleID       string        `json:"ruleId"`
	RuleIndex    int           `json:"ruleIndex"`
	Level        string        `json:"level"`
	Message      Text          `json:"message"`
	Locations    []Location    `json:"locations"`
	Suppressions []Suppression `json:"suppressions,omitempty"`
	// PartialFingerprints keep an alert the same alert across runs whose
	// line numbers moved: tool, rule and what it is about.
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

// Location is where a result points.
type Location struct {
	PhysicalLocation PhysicalLocation `json:"physicalLocation"`
}

// PhysicalLocation is a file and a region of it.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation names a file: relative to the checkout (uriBaseId
// %SRCROOT%), or an absolute file: URI.
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// Region is a line.
type Region struct {
	StartLine int `json:"startLine"`
}

// Suppression marks a result a baseline accepts.
type Suppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

// Level is the SARIF level of a severity: error, warning, note.
func Level(s report.Severity) string {
	switch s {
	case report.SeverityError:
		return "error"
	case report.SeverityWarning:
		return "warning"
	}
	return "note"
}

// FromReport builds the SARIF log of r: its problems (see
// [report.Report.Problems]) as results, the rules they break as the
// driver's rules, in order of first use.
func FromReport(r *report.Report) Log {
	category := "onceproof/certify"
	if r.Kind == report.KindLint {
		category = "onceproof/lint"
	}
	run := Run{
		Tool:              Tool{Driver: Driver{Name: "onceproof", Version: r.Onceproof, InformationURI: InformationURI, Rules: []Rule{}}},
		Results:           []Result{},
		AutomationDetails: &AutomationDetails{ID: category + "/"},
	}
	if v := strings.TrimPrefix(r.Onceproof, "v"); v != r.Onceproof {
		run.Tool.Driver.SemanticVer = v
	}
	index := map[string]int{}
	for _, p := range r.Problems() {
		i, ok := index[p.RuleID]
		if !ok {
			i = len(run.Tool.Driver.Rules)
			index[p.RuleID] = i
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, rule(p))
		}
		res := Result{
			RuleID: p.RuleID, RuleIndex: i, Level: Level(p.Severity),
			Message:             Text{Text: p.Title + ": " + p.Message},
			Locations:           []Location{location(p.File, p.Line)},
			PartialFingerprints: map[string]string{"onceproof/v1": string(p.Kind) + "/" + p.Tool + "/" + p.RuleID + "/" + fingerprintField(p)},
		}
		if p.Message == "" {
			res.Message.Text = p.Title
		}
		if p.Known != "" {
			res.Suppressions = []Suppression{{Kind: "external", Justification: p.Known}}
		}
		run.Results = append(run.Results, res)
	}
	return Log{Schema: Schema, Version: Version, Runs: []Run{run}}
}

// fingerprintField is what a lint problem is about (its title names the
// field); nothing for the others, whose tool and rule say it all.
func fingerprintField(p report.Problem) string {
	if p.Kind != report.ProblemLint {
		return ""
	}
	return p.Title
}

// rule describes the rule p breaks.
func rule(p report.Problem) Rule {
	r := Rule{ID: p.RuleID, Name: ruleName(p.RuleID), DefaultConfiguration: Configuration{Level: Level(p.Severity)}, HelpURI: InformationURI + "#readme"}
	switch p.Kind {
	case report.ProblemLint:
		r.ShortDescription = Text{Text: "lint: " + p.RuleID}
		r.Properties = &Properties{Tags: []string{"onceproof", "lint", "idempotency"}}
		r.HelpURI = InformationURI + "#lint-what-the-model-reads"
	case report.ProblemScenario:
		r.ShortDescription = Text{Text: "onceproof scenario " + p.RuleID + ": what it checks must hold under its faults"}
		r.Properties = &Properties{Tags: []string{"onceproof", "scenario", "idempotency"}}
		r.HelpURI = InformationURI + "#scenarios"
	case report.ProblemBaseline:
		r.ShortDescription = Text{Text: "a baseline entry whose scenario passes now"}
	case report.ProblemTool:
		r.ShortDescription = Text{Text: "a tool that could not be certified (unreachable, or its preflight failed)"}
	}
	if p.Help != "" {
		r.FullDescription = &Text{Text: p.Help}
		r.Help = &Text{Text: p.Help}
	}
	return r
}

// ruleName spells a rule id in PascalCase, SARIF's custom for names.
func ruleName(id string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' || r == '/' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// location is file at line: relative paths are relative to the checkout.
func location(file string, line int) Location {
	l := Location{PhysicalLocation: PhysicalLocation{ArtifactLocation: artifact(file)}}
	if line > 0 {
		l.PhysicalLocation.Region = &Region{StartLine: line}
	}
	return l
}

func artifact(file string) ArtifactLocation {
	switch {
	case file == "":
		return ArtifactLocation{URI: "onceproof.yaml", URIBaseID: "%SRCROOT%"}
	case filepath.IsAbs(file):
		return ArtifactLocation{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(file)}).String()}
	}
	clean := filepath.ToSlash(filepath.Clean(file))
	return ArtifactLocation{URI: (&url.URL{Path: strings.TrimPrefix(clean, "./")}).EscapedPath(), URIBaseID: "%SRCROOT%"}
}

// Write writes r as a SARIF 2.1.0 log.
func Write(w io.Writer, r *report.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(FromReport(r))
}
