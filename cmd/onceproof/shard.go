package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

// parseShard reads "I/N" (1 ≤ I ≤ N ≤ 10000).
func parseShard(s string) (*report.Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || count > 10000 || index < 1 || index > count {
		return nil, usagef("want I/N with 1 ≤ I ≤ N ≤ 10000, e.g. 2/4; got %q", s)
	}
	return &report.Shard{Index: index, Count: count}, nil
}

// runInfo describes a certify run: its search settings, its spec (by
// content), its tools and scenario ids in order, and its shard.
func runInfo(sp *spec.Spec, selected []spec.Tool, c common, shard *report.Shard) (*report.RunInfo, error) {
	data, err := os.ReadFile(sp.Path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	run := &report.RunInfo{Seed: c.seed, Checks: c.checks, Budget: c.budget, Spec: sp.Path, SpecSHA256: hex.EncodeToString(sum[:]), Shard: shard}
	for _, ts := range selected {
		run.Tools = append(run.Tools, ts.Name)
	}
	ids := c.scenarios
	if len(ids) == 0 {
		ids = scenarios.All()
	}
	for _, id := range ids {
		run.Scenarios = append(run.Scenarios, string(id))
	}
	return run, nil
}

// shareOf is the filter of tool number ti's scenarios that are shard's: the
// run's (tool, scenario) pairs are numbered tool by tool in the run's order
// and dealt round-robin. nil when none of the tool's pairs is the shard's.
func shareOf(run *report.RunInfo, shard report.Shard, ti int) func(scenarios.ID) bool {
	take := map[scenarios.ID]bool{}
	for si, id := range run.Scenarios {
		if shard.Takes(ti*len(run.Scenarios) + si) {
			take[scenarios.ID(id)] = true
		}
	}
	if len(take) == 0 {
		return nil
	}
	return func(id scenarios.ID) bool { return take[id] }
}
