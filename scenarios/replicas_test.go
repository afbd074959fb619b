package scenarios_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/fixtures/fixturetest"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/storeoracle"
	"github.com/onceproof/onceproof/scenarios"
)

// replicated is an HTTP tool served by several processes (here: servers in
// this process), one fault proxy in front of each.
type replicated struct {
	*harness.HTTPTool
	ups []string
}

func (r replicated) Replicas() int                { return len(r.ups) }
func (r replicated) ReplicaUpstream(i int) string { return r.ups[i-1] }

// hostPostgres starts a PostgreSQL server from the host's binaries for
// the test, skipping it when PostgreSQL is not installed.
func hostPostgres(t *testing.T) *fixturetest.Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	pg, err := fixturetest.StartPostgres(ctx)
	if errors.Is(err, fixturetest.ErrNotInstalled) {
		t.Skipf("needs PostgreSQL 15: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	return pg
}

// startReplicas serves n replicas of a store-backed fixture kind in this
// process, sharing one fresh PostgreSQL database (each replica has its own
// memory: memory-dedupe's records are per replica, as in separate
// processes). The oracle counts the tickets in the database.
func startReplicas(t *testing.T, pg *fixturetest.Postgres, kind fixtures.Kind, n int) replicated {
	t.Helper()
	dsn, err := pg.CreateDatabase(t.Context())
	require.NoError(t, err)
	var ups []string
	for range n {
		srv, err := fixtures.StartContext(t.Context(), kind, "127.0.0.1:0", fixtures.Options{Postgres: dsn, Log: io.Discard})
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.Close() })
		ups = append(ups, srv.Addr())
	}
	oracle := &storeoracle.SQLOracle{DSN: dsn, Query: fixtures.SQLCountQuery}
	name := string(kind) + "-x" + strconv.Itoa(n)
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: name, URL: "http://" + ups[0] + "/tickets",
		Headers: map[string]string{"Content-Type": "application/json"}, Body: fixtures.Body,
		Timeout: fastTimeout, ResultID: "/id", Oracle: oracle})
	require.NoError(t, err)
	return replicated{HTTPTool: tool, ups: ups}
}

// TestReplicasInProcess: memory-dedupe (tickets in PostgreSQL, dedupe
// records in each process's memory) passes as one replica and fails
// lost-response, concurrent-duplicate and key-mismatch as two, because a
// retry, a duplicate or a reused key lands on another replica;
// correct-postgres (an atomic claim in the shared database) passes as
// three. Every attempt of a counterexample says which replica served it.
// (crash-restart needs containers: see TestContainerReplicaVerdicts.)
func TestReplicasInProcess(t *testing.T) {
	pg := hostPostgres(t)
	setRapid(t, 20, 0)
	for _, tc := range []struct {
		kind   fixtures.Kind
		n      int
		reason string
	}{
		{fixtures.MemoryDedupe, 1, "one process: its memory sees every retry"},
		{fixtures.MemoryDedupe, 2, "records in each replica's memory: whatever another replica serves is new to it"},
		{fixtures.CorrectPostgres, 3, "one atomic claim in the database every replica shares"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			tool := startReplicas(t, pg, tc.kind, tc.n)
			require.Equal(t, tc.n, harness.ReplicasOf(tool))
			want := fixtures.ExpectedReplicas(tc.kind, tc.n)
			rep := mustRun(t, tool, fast)
			require.Empty(t, rep.Error)
			require.GreaterOrEqual(t, len(rep.Scenarios), 5, "the three failure modes, key-mismatch and distinct-keys at least")
			for _, s := range rep.Scenarios {
				require.Contains(t, want, s.ID, "%s has a documented verdict", s.ID)
				require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s: %s × %s: %s\n%v", tc.reason, tool.Name(), s.ID, s.Reason, s.Counterexample)
				if s.Verdict != report.Fail {
					continue
				}
				c := s.Counterexample
				require.Contains(t, c.Plan, "replica", "the plan says how attempts were balanced")
				seen := map[int]bool{}
				for _, a := range c.Attempts {
					require.GreaterOrEqual(t, a.Replica, 1, "attempt %d names its replica", a.N)
					require.LessOrEqual(t, a.Replica, tc.n)
					seen[a.Replica] = true
				}
				require.Greater(t, len(seen), 1, "%s: a failure of per-replica records takes two replicas\n%v", s.ID, c)
				require.Contains(t, c.String(), "replica", "the attempt table has a replica column")
				t.Logf("%s × %s:\n%s", tool.Name(), s.ID, c)
			}
		})
	}
}

// TestReplicaBalanceReplays: the replica of every attempt is part of the
// drawn plan, so the same seed gives the same counterexample, replica for
// replica, and it shrinks to round-robin.
func TestReplicaBalanceReplays(t *testing.T) {
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.LostResponse, scenarios.KeyMismatch}
	pg := hostPostgres(t)
	setRapid(t, 20, 99)
	first := mustRun(t, startReplicas(t, pg, fixtures.MemoryDedupe, 2), cfg)
	second := mustRun(t, startReplicas(t, pg, fixtures.MemoryDedupe, 2), cfg)
	for i := range first.Scenarios {
		a, b := first.Scenarios[i], second.Scenarios[i]
		require.Equal(t, report.Fail, a.Verdict, a.ID)
		require.Equal(t, a.Seed, b.Seed)
		require.Equal(t, a.Counterexample.Plan, b.Counterexample.Plan)
		require.Equal(t, replicaShape(a.Counterexample), replicaShape(b.Counterexample))
		require.Contains(t, a.Counterexample.Plan, "round-robin", "%s shrinks to round-robin: %s", a.ID, a.Counterexample.Plan)
	}
}

func replicaShape(c *harness.Counterexample) []string {
	var s []string
	for i, line := range shape(c) {
		s = append(s, line+" replica "+strconv.Itoa(c.Attempts[i].Replica))
	}
	return s
}

// TestOneReplicaDrawsNothing: a tool that runs as one process draws no
// balance, so its plans (and replays) are what they were before replicas.
func TestOneReplicaDrawsNothing(t *testing.T) {
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.LostResponse}
	setRapid(t, 20, 4242)
	rep := mustRun(t, startFixture(t, fixtures.Naive), cfg)
	c := rep.Scenarios[0].Counterexample
	require.NotNil(t, c)
	require.NotContains(t, c.Plan, "replica")
	require.False(t, strings.Contains(c.String(), "replica"), "no replica column for one process")
	for _, a := range c.Attempts {
		require.Zero(t, a.Replica)
	}
}
