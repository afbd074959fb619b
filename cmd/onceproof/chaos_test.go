package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
)

func TestChaosExitCodes(t *testing.T) {
	correct := writeSpec(t, startKind(t, fixtures.Correct))
	racy := writeSpec(t, startKind(t, fixtures.CheckThenAct))
	for _, tc := range []struct {
		args   []string
		code   int
		output string
		reason string
	}{
		{[]string{"--spec", correct, "--agents", "8", "--ops", "200", "--seed", "3"}, exitOK, "no violation", "a correct tool breaks nothing"},
		{[]string{"--spec", racy, "--agents", "16", "--ops", "400", "--duplicate-rate", "0.5", "--seed", "3"}, exitFailed, "VIOLATED exactly-once", "duplicates race through check-then-act"},
		{[]string{"--spec", correct, "--agents", "0"}, exitUsage, "agents 0", "bad counts are usage errors"},
		{[]string{"--spec", correct, "--fault-rate", "2"}, exitUsage, "fault rate 2", "a rate is a probability"},
		{[]string{"--agents", "4"}, exitUsage, "--spec is required", "a spec is needed"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"chaos", "--quiet"}, tc.args...)...)
			require.Equal(t, tc.code, code, "%s\n%s%s", tc.reason, out, errOut)
			require.Contains(t, out+errOut, tc.output, tc.reason)
		})
	}
}

func TestChaosJSONReport(t *testing.T) {
	spec := writeSpec(t, startKind(t, fixtures.Correct))
	out := filepath.Join(t.TempDir(), "chaos.json")
	code, _, errOut := runCLI(t, "chaos", "--quiet", "--spec", spec, "--agents", "4", "--ops", "50", "--format", "json", "--out", out)
	require.Equal(t, exitOK, code, errOut)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var doc struct {
		Kind  string `json:"kind"`
		Chaos struct {
			Ops           int     `json:"ops"`
			OpsPerSecond  float64 `json:"ops_per_second"`
			DedupeHitRate float64 `json:"dedupe_hit_rate"`
			Latency       struct {
				P99 int64 `json:"p99_ns"`
			} `json:"latency"`
		} `json:"chaos"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, "chaos", doc.Kind)
	require.Equal(t, 50, doc.Chaos.Ops)
	require.Positive(t, doc.Chaos.OpsPerSecond)
	require.Positive(t, doc.Chaos.Latency.P99)
}
