package scenarios_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

// containerSpec is the example spec of tools that run as containers.
const containerSpec = "../examples/containers/tickets.yaml"

// dockerOrSkip skips only when no Docker engine is reachable; everything
// else a container test needs (the local images) must be there.
func dockerOrSkip(t *testing.T) container.EnvOptions {
	t.Helper()
	docker, err := container.DockerClient(context.Background())
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	t.Cleanup(func() { _ = docker.Close() })
	return container.EnvOptions{Images: container.LocalImages{Map: container.DefaultLocalImages(), Docker: docker}}
}

// TestContainerFixtureVerdicts certifies the store-backed fixtures as
// containers with their databases and asserts their documented verdicts,
// including crash-restart (which must catch the in-memory dedupe every run)
// and dependency-fault.
func TestContainerFixtureVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: rapid runs a fifth of the checks, too few to show every documented verdict")
	}
	opts := dockerOrSkip(t)
	sp, err := spec.Load(containerSpec)
	require.NoError(t, err)
	setRapid(t, 6, 0)
	for _, ts := range sp.Tools {
		t.Run(ts.Name, func(t *testing.T) {
			kind := fixtures.Kind(ts.Container.Tool.Env["ONCEPROOF_FIXTURE_KIND"])
			want := fixtures.Expected(kind)
			require.NotEmpty(t, want, "kind %q documents its verdicts", kind)
			ctx := context.Background()
			began := time.Now()
			tool, stop, err := ts.Start(ctx, opts)
			require.NoError(t, err)
			defer stop(ctx)
			t.Logf("containers ready in %s", time.Since(began).Round(time.Millisecond))
			rep, err := scenarios.Run(ctx, tool, scenarios.Config{MaxBackoff: 20 * time.Millisecond})
			require.NoError(t, err)
			t.Logf("start to verdict: %s", time.Since(began).Round(time.Millisecond))
			ids := map[string]bool{}
			for _, s := range rep.Scenarios {
				ids[s.ID] = true
				require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s × %s: %s\n%v", ts.Name, s.ID, s.Reason, s.Counterexample)
				t.Logf("%-22s %s %d/%d", s.ID, s.Verdict, s.ValidTrials, s.Checks)
			}
			require.True(t, ids[string(scenarios.CrashRestart)], "a container tool runs crash-restart")
			require.Equal(t, ts.Container.Toxiproxy == container.ToxiproxyContainer, ids[string(scenarios.DependencyFault)],
				"dependency-fault runs exactly when the Toxiproxy container proxies a dependency")
		})
	}
}

// TestCrashRestartCatchesMemoryDedupeEveryRun repeats crash-restart on the
// in-memory dedupe fixture: it must fail every time.
func TestCrashRestartCatchesMemoryDedupeEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts containers")
	}
	opts := dockerOrSkip(t)
	sp, err := spec.Load(containerSpec)
	require.NoError(t, err)
	ts, err := sp.Find("tickets-memory-dedupe")
	require.NoError(t, err)
	reps := 3
	if s := os.Getenv("ONCEPROOF_SOAK"); s != "" {
		reps, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	ctx := context.Background()
	tool, stop, err := ts.Start(ctx, opts)
	require.NoError(t, err)
	defer stop(ctx)
	setRapid(t, 5, 0)
	for i := range reps {
		rep, err := scenarios.Run(ctx, tool, scenarios.Config{Scenarios: []scenarios.ID{scenarios.CrashRestart}})
		require.NoError(t, err)
		s := rep.Scenarios[0]
		require.Equal(t, report.Fail, s.Verdict, "run %d: %s", i, s.Reason)
		require.Equal(t, 1, s.Checks, "run %d: the first trial already duplicates", i)
		require.Contains(t, s.Counterexample.String(), "container killed (SIGKILL) and restarted")
	}
}

// TestMissingLocalImageIsAClearError: a spec naming an image with no local
// build fails before anything runs, never pulls, and leaves nothing behind.
func TestMissingLocalImageIsAClearError(t *testing.T) {
	opts := dockerOrSkip(t)
	sp, err := spec.Load(containerSpec)
	require.NoError(t, err)
	ts, err := sp.Find("tickets-memory-dedupe")
	require.NoError(t, err)
	c := *ts.Container
	c.Tool.Image = "ghcr.io/onceproof/never-built:0.0.1"
	ts.Container = &c
	_, _, err = ts.Start(context.Background(), opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "ghcr.io/onceproof/never-built:0.0.1 is not built locally")
	require.Zero(t, ownContainers(t), "a failed start removes what it started")
}
