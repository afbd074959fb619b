package report

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// RunInfo identifies a certification run, so that the reports of its
// shards can be merged (and those of different runs cannot).
type RunInfo struct {
	// Seed, Checks and Budget are the search settings every shard shares.
	Seed   uint64        `json:"seed"`
	Checks int           `json:"checks"`
	Budget time.Duration `json:"budget_ns,omitempty"`
	// Spec is the spec file as named; SpecSHA256 the hash of its content.
	Spec       string `json:"spec,omitempty"`
	SpecSHA256 string `json:"spec_sha256,omitempty"`
	// Tools and Scenarios are the run's tools and scenario ids in order
	// (every shard's, not only its own share).
	Tools     []string `json:"tools"`
	Scenarios []string `json:"scenarios"`
	// Shard is this report's share of the run (nil for a whole run).
	Shard *Shard `json:"shard,omitempty"`
	// Merged is how many shard reports a merged report was made of.
	Merged int `json:"merged,omitempty"`
}

// Shard is share Index (from 1) of Count.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Takes reports whether shard s runs pair number k (from 0) of a run: pairs
// are dealt round-robin.
func (s Shard) Takes(k int) bool { return k%s.Count == s.Index-1 }

// ErrMismatch marks shard reports that are not shares of one run.
var ErrMismatch = errors.New("reports of different runs")

// MergeReports combines the reports of a run's shards into the report of
// the whole run: every tool with every scenario its shards ran, in the
// run's order. It refuses reports of different runs (seed, checks, budget,
// spec content, tools, scenarios or shard count differ), a shard given
// twice, and a missing shard.
func MergeReports(reports []*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, fmt.Errorf("%w: no report to merge", ErrMismatch)
	}
	first := reports[0]
	if first.Run == nil || first.Run.Shard == nil {
		return nil, fmt.Errorf("%w: report 1 is not a shard's (run it with --shard I/N)", ErrMismatch)
	}
	run := *first.Run
	seen := map[int]bool{}
	for i, r := range reports {
		switch {
		case r.Run == nil || r.Run.Shard == nil:
			return nil, fmt.Errorf("%w: report %d is not a shard's (run it with --shard I/N)", ErrMismatch, i+1)
		case r.Run.Seed != run.Seed, r.Run.Checks != run.Checks, r.Run.Budget != run.Budget:
			return nil, fmt.Errorf("%w: report %d searched with seed %d, %d checks, budget %s; report 1 with seed %d, %d checks, budget %s",
				ErrMismatch, i+1, r.Run.Seed, r.Run.Checks, r.Run.Budget, run.Seed, run.Checks, run.Budget)
		case r.Run.SpecSHA256 != run.SpecSHA256:
			return nil, fmt.Errorf("%w: report %d certified another spec (sha256 %s, report 1 %s)", ErrMismatch, i+1, r.Run.SpecSHA256, run.SpecSHA256)
		case !slices.Equal(r.Run.Tools, run.Tools), !slices.Equal(r.Run.Scenarios, run.Scenarios):
			return nil, fmt.Errorf("%w: report %d selected other tools or scenarios", ErrMismatch, i+1)
		case r.Run.Shard.Count != run.Shard.Count:
			return nil, fmt.Errorf("%w: report %d is shard %s, report 1 shard %s", ErrMismatch, i+1, r.Run.Shard, run.Shard)
		case seen[r.Run.Shard.Index]:
			return nil, fmt.Errorf("%w: shard %s is given twice", ErrMismatch, r.Run.Shard)
		case r.Onceproof != first.Onceproof:
			return nil, fmt.Errorf("%w: report %d was written by onceproof %s, report 1 by %s", ErrMismatch, i+1, r.Onceproof, first.Onceproof)
		}
		seen[r.Run.Shard.Index] = true
	}
	for i := 1; i <= run.Shard.Count; i++ {
		if !seen[i] {
			return nil, fmt.Errorf("%w: shard %d/%d is missing", ErrMismatch, i, run.Shard.Count)
		}
	}
	merged := &Report{Version: first.Version, Kind: first.Kind, Onceproof: first.Onceproof, Toxiproxy: first.Toxiproxy, Started: first.Started}
	run.Shard, run.Merged = nil, len(reports)
	merged.Run = &run
	byName := map[string]*ToolReport{}
	for _, r := range reports {
		if r.Started.Before(merged.Started) {
			merged.Started = r.Started
		}
		for _, t := range r.Tools {
			m, ok := byName[t.Name]
			if !ok {
				c := t
				c.Scenarios = nil
				m = &c
				byName[t.Name] = m
			}
			if t.Error != "" && m.Error == "" {
				m.Error = t.Error
			}
			m.Scenarios = append(m.Scenarios, t.Scenarios...)
			m.Duration = max(m.Duration, t.Duration)
			m.Startup = max(m.Startup, t.Startup)
		}
	}
	order := func(list []string, s string) int {
		if i := slices.Index(list, s); i >= 0 {
			return i
		}
		return len(list)
	}
	for _, name := range run.Tools {
		t, ok := byName[name]
		if !ok {
			continue
		}
		slices.SortStableFunc(t.Scenarios, func(a, b ScenarioReport) int {
			return order(run.Scenarios, a.ID) - order(run.Scenarios, b.ID)
		})
		t.Finish()
		merged.Tools = append(merged.Tools, *t)
	}
	return merged, nil
}
