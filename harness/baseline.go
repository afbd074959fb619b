package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// Baseline marks on a scenario report.
const (
	// BaselineKnown marks a failure the baseline lists: it does not fail the
	// run.
	BaselineKnown = "known-failure"
	// BaselineStale marks a baseline entry whose scenario passes now: it
	// fails the run until the entry is removed, so the baseline only shrinks.
	BaselineStale = "stale"
)

// Baseline lists known failing (tool, scenario) pairs, for adopting
// onceproof in CI before every tool passes.
type Baseline struct {
	Version       int               `yaml:"version"`
	KnownFailures []BaselineFailure `yaml:"known_failures"`
}

// BaselineFailure is one known failing pair.
type BaselineFailure struct {
	Tool     string `yaml:"tool"`
	Scenario string `yaml:"scenario"`
	// Reason says why it is accepted for now (an issue link, a plan).
	Reason string `yaml:"reason,omitempty"`
}

// LoadBaseline reads a baseline file (YAML, version: 1). Errors name the
// file and line and wrap ErrSpec.
func LoadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	var b Baseline
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&b); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			return nil, &SpecError{File: path, Msg: te.Errors[0]}
		}
		return nil, &SpecError{File: path, Msg: err.Error()}
	}
	if b.Version != 1 {
		return nil, &SpecError{File: path, Field: "version", Msg: fmt.Sprintf("want 1, got %d", b.Version)}
	}
	seen := map[[2]string]bool{}
	for i, f := range b.KnownFailures {
		field := fmt.Sprintf("known_failures[%d]", i)
		if f.Tool == "" || f.Scenario == "" {
			return nil, &SpecError{File: path, Field: field, Msg: "want tool and scenario"}
		}
		k := [2]string{f.Tool, f.Scenario}
		if seen[k] {
			return nil, &SpecError{File: path, Field: field, Msg: fmt.Sprintf("duplicate entry %s / %s", f.Tool, f.Scenario)}
		}
		seen[k] = true
	}
	return &b, nil
}

// Apply marks r's scenarios against the baseline: a listed failure becomes
// a known failure, a listed pair that passes becomes stale. It returns the
// entries that matched no scenario that ran (tools or scenarios not run this
// time are neither known nor stale).
func (b *Baseline) Apply(r *Report) []BaselineFailure {
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
			case Fail:
				s.Baseline = BaselineKnown
			case Pass:
				s.Baseline = BaselineStale
			}
		}
	}
	var unmatched []BaselineFailure
	for _, f := range b.KnownFailures {
		if !matched[[2]string{f.Tool, f.Scenario}] {
			unmatched = append(unmatched, f)
		}
	}
	return unmatched
}
