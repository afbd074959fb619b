package scenarios_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/report/html"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

// The example specs of a tool as several replicas, and of tools that call a
// payment provider onceproof plays.
const (
	replicaSpec    = "../examples/containers/replicas.yaml"
	downstreamSpec = "../examples/containers/downstream.yaml"
)

// soakReps is how often a container verdict test certifies each tool
// (ONCEPROOF_SOAK=N for a soak).
func soakReps(t *testing.T) int {
	t.Helper()
	if s := os.Getenv("ONCEPROOF_SOAK"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ONCEPROOF_SOAK")
		return n
	}
	return 1
}

// TestContainerReplicaVerdicts certifies memory-dedupe as one and as two
// replicas and correct-postgres as three (with the Toxiproxy container on
// the replicas' links to their database), and asserts the documented
// verdicts (fixtures.ExpectedReplicas): with two replicas a retry, a
// duplicate, a reused key or the retry after a crash that another replica
// serves is new to it. Every attempt of a failure names its replica, and
// the HTML timeline's lanes show it.
func TestContainerReplicaVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts containers")
	}
	opts := dockerOrSkip(t)
	sp, err := spec.Load(replicaSpec)
	require.NoError(t, err)
	setRapid(t, 6, 0)
	reps := soakReps(t)
	for _, ts := range sp.Tools {
		t.Run(ts.Name, func(t *testing.T) {
			kind, n := fixtures.Kind(ts.Container.Tool.Env["ONCEPROOF_FIXTURE_KIND"]), ts.Container.Replicas
			want := fixtures.ExpectedReplicas(kind, n)
			require.NotEmpty(t, want, "%s as %d replicas documents its verdicts", kind, n)
			ctx := context.Background()
			tool, stop, err := ts.Start(ctx, opts)
			require.NoError(t, err)
			defer stop(ctx)
			require.Equal(t, n, harness.ReplicasOf(tool))
			for i := range reps {
				rep, err := scenarios.Run(ctx, tool, scenarios.Config{MaxBackoff: 20 * time.Millisecond, ShrinkTime: 5 * time.Second})
				require.NoError(t, err)
				ran := map[string]bool{}
				for _, s := range rep.Scenarios {
					ran[s.ID] = true
					w, ok := want[s.ID]
					require.True(t, ok, "%s × %s ran but has no documented verdict", ts.Name, s.ID)
					require.Equal(t, w, verdictWord(s.Verdict), "run %d: %s × %s: %s\n%v", i, ts.Name, s.ID, s.Reason, s.Counterexample)
					t.Logf("%-22s %s %d/%d", s.ID, s.Verdict, s.ValidTrials, s.Checks)
					if s.Verdict != report.Fail || n == 1 {
						continue
					}
					for _, a := range s.Counterexample.Attempts {
						require.Positive(t, a.Replica, "%s: attempt %d names its replica", s.ID, a.N)
					}
				}
				require.True(t, ran[string(scenarios.CrashRestart)], "crash-restart runs for a container tool")
				if n > 1 && !rep.AgentReady {
					var page bytes.Buffer
					r := &report.Report{Version: report.ReportVersion, Tools: []report.ToolReport{rep}}
					require.NoError(t, html.Write(&page, r))
					require.Contains(t, page.String(), " replica 2", "the timeline's lanes name the replica of each attempt")
				}
			}
		})
	}
}

// TestContainerDownstreamVerdicts certifies the downstream fixtures as
// containers: each gets the URL of the provider onceproof plays in
// DOWNSTREAM_URL, reaches it across the container network, and gets its
// documented verdicts (the five HTTP scenarios, crash-restart and
// downstream).
func TestContainerDownstreamVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts containers")
	}
	opts := dockerOrSkip(t)
	sp, err := spec.Load(downstreamSpec)
	require.NoError(t, err)
	setRapid(t, 6, 0)
	reps := soakReps(t)
	for _, ts := range sp.Tools {
		t.Run(ts.Name, func(t *testing.T) {
			kind := fixtures.Kind(ts.Container.Tool.Env["ONCEPROOF_FIXTURE_KIND"])
			want := fixtures.Expected(kind)
			require.NotEmpty(t, want[string(scenarios.Downstream)], "%s documents its downstream verdict", kind)
			ctx := context.Background()
			tool, stop, err := ts.Start(ctx, opts)
			require.NoError(t, err)
			defer stop(ctx)
			d := tool.(harness.Downstreamed).Downstream()
			require.NotNil(t, d)
			require.NotContains(t, d.URL(), "127.0.0.1", "the containers reach the provider on their network's gateway")
			for i := range reps {
				rep, err := scenarios.Run(ctx, tool, scenarios.Config{MaxBackoff: 20 * time.Millisecond, ShrinkTime: 5 * time.Second})
				require.NoError(t, err)
				ran := map[string]bool{}
				for _, s := range rep.Scenarios {
					ran[s.ID] = true
					require.Equal(t, want[s.ID], verdictWord(s.Verdict), "run %d: %s × %s: %s\n%v", i, ts.Name, s.ID, s.Reason, s.Counterexample)
					t.Logf("%-22s %s %d/%d", s.ID, s.Verdict, s.ValidTrials, s.Checks)
				}
				require.True(t, ran[string(scenarios.Downstream)], "a tool with a downstream section runs the downstream scenario")
			}
		})
	}
}
