package baseline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/onceproof/onceproof/harness/report"
)

// Baseline lists known failing (tool, scenario) pairs, for adopting
// onceproof in CI before every tool passes.
type Baseline struct {
	Version       int       `yaml:"version"`
	KnownFailures []Failure `yaml:"known_failures"`
}

// Failure is one known failing pair.
type Failure struct {
	Tool     string `yaml:"tool"`
	Scenario string `yaml:"scenario"`
	// Reason says why it is accepted for now (an issue link, a plan).
	Reason string `yaml:"reason,omitempty"`
}

// Load reads a baseline file (YAML, version: 1). Errors about its content
// are [*Error]s naming the file, line and field, and wrap [ErrBaseline];
// a file that cannot be read is not.
func Load(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{File: path, Line: yamlLine(err), Msg: yamlMsg(err)}
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: path, Msg: "empty file: want version: 1 and known_failures"}
	}
	var b Baseline
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&b); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			return nil, &Error{File: path, Line: yamlLine(errors.New(te.Errors[0])), Msg: yamlMsg(errors.New(te.Errors[0]))}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	doc := root.Content[0]
	if b.Version != 1 {
		return nil, &Error{File: path, Line: lineOf(doc, "version"), Field: "version", Msg: fmt.Sprintf("want 1, got %d", b.Version)}
	}
	var entries []*yaml.Node
	if n := valueOf(doc, "known_failures"); n != nil {
		entries = n.Content
	}
	seen := map[[2]string]bool{}
	for i, f := range b.KnownFailures {
		field := fmt.Sprintf("known_failures[%d]", i)
		line := 0
		if i < len(entries) {
			line = entries[i].Line
		}
		if f.Tool == "" || f.Scenario == "" {
			return nil, &Error{File: path, Line: line, Field: field, Msg: "want tool and scenario"}
		}
		k := [2]string{f.Tool, f.Scenario}
		if seen[k] {
			return nil, &Error{File: path, Line: line, Field: field, Msg: fmt.Sprintf("duplicate entry %s / %s", f.Tool, f.Scenario)}
		}
		seen[k] = true
	}
	return &b, nil
}

// valueOf returns the value of key in the mapping m (nil when absent).
func valueOf(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// lineOf is the line of key in the mapping m (0 when absent).
func lineOf(m *yaml.Node, key string) int {
	if v := valueOf(m, key); v != nil {
		return v.Line
	}
	return 0
}

// yamlLine reads the line a yaml.v3 error names ("yaml: line N: ...").
func yamlLine(err error) int {
	var n int
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if _, e := fmt.Sscanf(msg, "line %d:", &n); e == nil {
		return n
	}
	return 0
}

// yamlMsg is a yaml.v3 error without its "yaml: line N: " prefix.
func yamlMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
		return rest
	}
	return msg
}

// Apply marks r's scenarios against the baseline: a listed failure becomes
// a known failure, a listed pair that passes becomes stale. It returns the
// entries that matched no scenario that ran (tools or scenarios not run this
// time are neither known nor stale).
func (b *Baseline) Apply(r *report.Report) []Failure {
	listed := map[[2]string]bool{}
	for _, f := range b.KnownFailures {
		listed[[2]string{f.Tool, f.Scenario}] = true
	}
	matched := map[[2]string]bool{}
	for ti := range r.Tools {
		t := &r.Tools[ti]
		for si := range t.Scenarios {
			s := &t.Scenarios[si]
			k := [2]string{t.Name, s.ID}
			if !listed[k] {
				continue
			}
			matched[k] = true
			switch s.Verdict {
			case report.Fail:
				s.Baseline = report.BaselineKnown
			case report.Pass:
				s.Baseline = report.BaselineStale
			}
		}
	}
	var unmatched []Failure
	for _, f := range b.KnownFailures {
		if !matched[[2]string{f.Tool, f.Scenario}] {
			unmatched = append(unmatched, f)
		}
	}
	return unmatched
}

// ErrBaseline marks every error about a baseline file's content.
var ErrBaseline = errors.New("baseline error")

// Error is an error located in a baseline file.
type Error struct {
	File string
	// Line is the 1-based line the error is about (0 when unknown).
	Line int
	// Field is the path of the field ("known_failures[2]"; "" for the file
	// as a whole).
	Field string
	Msg   string
}

// Error returns "FILE:LINE: FIELD: MSG", leaving out the parts that are
// unknown.
func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Field + ": " + e.Msg
}

// Unwrap returns ErrBaseline.
func (e *Error) Unwrap() error { return ErrBaseline }
