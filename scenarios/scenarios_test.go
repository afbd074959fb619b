package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/scenarios"
)

func startFixture(t *testing.T, kind fixtures.Kind) *harness.HTTPTool {
	t.Helper()
	srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	tool, err := srv.HTTPTool(string(kind), 150*time.Millisecond)
	require.NoError(t, err)
	return tool
}

func TestCertifyCorrectFixture(t *testing.T) {
	scenarios.Certify(t, startFixture(t, fixtures.Correct), scenarios.Config{MaxBackoff: 20 * time.Millisecond})
}

func TestRunVerdicts(t *testing.T) {
	for _, kind := range fixtures.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			rep, err := scenarios.Run(context.Background(), startFixture(t, kind), scenarios.Config{MaxBackoff: 20 * time.Millisecond})
			require.NoError(t, err)
			want := fixtures.Expected(kind)
			for _, s := range rep.Scenarios {
				got := "fail"
				if s.Verdict == harness.Pass {
					got = "pass"
				}
				require.Equal(t, want[s.ID], got, "%s/%s: %s\n%v", kind, s.ID, s.Reason, s.Counterexample)
				t.Logf("%s %s checks=%d valid=%d %s", s.ID, s.Verdict, s.Checks, s.ValidTrials, s.Reason)
			}
		})
	}
}
