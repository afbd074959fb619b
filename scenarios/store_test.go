package scenarios_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/fixtures/fixturetest"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// TestStoreKindVerdictsInProcess certifies the store-backed kinds
// served in-process against PostgreSQL and Redis started from the host's
// binaries, under every scenario that needs no container (crash-restart and
// dependency-fault run in TestContainerFixtureVerdicts), and asserts their
// documented verdicts. It skips when the binaries are not installed.
func TestStoreKindVerdictsInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := fixturetest.StartPostgres(ctx)
	if errors.Is(err, fixturetest.ErrNotInstalled) {
		t.Skipf("needs PostgreSQL 15: %v", err)
	}
	require.NoError(t, err)
	defer pg.Close()
	rdb, err := fixturetest.StartRedis(ctx)
	if errors.Is(err, fixturetest.ErrNotInstalled) {
		t.Skipf("needs redis-server: %v", err)
	}
	require.NoError(t, err)
	defer rdb.Close()
	setRapid(t, 10, 0)
	for _, kind := range fixtures.StoreKinds() {
		t.Run(string(kind), func(t *testing.T) {
			var opts fixtures.Options
			if kind.NeedsPostgres() {
				opts.Postgres, err = pg.CreateDatabase(ctx)
				require.NoError(t, err)
			}
			if kind.NeedsRedis() {
				opts.Redis, err = rdb.NewDatabase()
				require.NoError(t, err)
			}
			srv, err := fixtures.StartContext(ctx, kind, "127.0.0.1:0", opts)
			require.NoError(t, err)
			defer srv.Close()
			tool, err := srv.HTTPTool(string(kind), fastTimeout)
			require.NoError(t, err)
			want := fixtures.Expected(kind)
			cfg := fast
			cfg.Scenarios = documented(tool, want)
			rep := mustRun(t, tool, cfg)
			require.Empty(t, rep.Error)
			require.NotEmpty(t, rep.Scenarios)
			for _, s := range rep.Scenarios {
				require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s × %s: %s\n%v", kind, s.ID, s.Reason, s.Counterexample)
				if s.Verdict == report.Pass {
					require.Positive(t, s.ValidTrials)
				}
			}
			require.NotContains(t, cfg.Scenarios, scenarios.CrashRestart, "an in-process tool cannot crash")
		})
	}
}
