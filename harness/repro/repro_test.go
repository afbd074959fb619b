package repro_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults/faultstest"
	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/repro"
	"github.com/onceproof/onceproof/scenarios"
)

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// TestScriptReproducesTheDuplicate: the reproducer of a real failure, run
// with bash against a fresh copy of the failing tool behind a
// toxiproxy-server, makes the same duplicate the report describes.
func TestScriptReproducesTheDuplicate(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	for _, tc := range []struct {
		kind   fixtures.Kind
		id     scenarios.ID
		race   bool
		reason string
	}{
		{fixtures.Naive, scenarios.LostResponse, false, "a lost response and a retry"},
		{fixtures.Naive, scenarios.PreServerError, false, "nothing to reproduce: the naive tool passes this"},
		{fixtures.CheckThenAct, scenarios.ConcurrentDuplicate, true, "held duplicates released together (a race: at least two effects)"},
		{fixtures.LongRunningRestarts, scenarios.LongRunning, false, "a long-running trigger whose retry starts a second workflow, with its status polls"},
	} {
		t.Run(string(tc.kind)+"/"+string(tc.id), func(t *testing.T) {
			srv, err := fixtures.Start(tc.kind, "127.0.0.1:0", fixtures.Options{})
			require.NoError(t, err)
			defer srv.Close()
			tool, err := srv.HTTPTool(string(tc.kind), 2*time.Second)
			require.NoError(t, err)
			rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{Scenarios: []scenarios.ID{tc.id}, Checks: 30, Seed: 8, MaxBackoff: 5 * time.Millisecond})
			require.NoError(t, err)
			s := rep.Scenarios[0]
			dir := t.TempDir()
			scripts, err := repro.Write(dir, &report.Report{Tools: []report.ToolReport{rep}})
			require.NoError(t, err)
			readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
			require.NoError(t, err)
			require.Contains(t, string(readme), "toxiproxy-server")
			if s.Verdict != report.Fail {
				require.Empty(t, scripts, tc.reason)
				return
			}
			require.Len(t, scripts, 1)
			toxics, err := os.ReadFile(strings.TrimSuffix(scripts[0], ".sh") + ".toxics.json")
			require.NoError(t, err)
			if hasFault(s.Counterexample.Attempts) {
				require.Contains(t, string(toxics), `"stream"`)
			}

			// A fresh tool: only the script's attempts count.
			fresh, err := fixtures.Start(tc.kind, "127.0.0.1:0", fixtures.Options{})
			require.NoError(t, err)
			defer fresh.Close()
			cmd := exec.Command("bash", scripts[0])
			cmd.Env = append(os.Environ(), "TOXIPROXY="+faultstest.Server(t), "TARGET="+fresh.Addr(), "LISTEN="+freePort(t))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			marker := s.Counterexample.Effects[0].Marker
			if !tc.race {
				require.Equal(t, s.Counterexample.Effects[0].Count, fresh.Tool().Count(marker),
					"the script makes the effects the report describes:\n%s", out)
			}
			require.Greater(t, fresh.Tool().Count(marker), 1, "a duplicate")
		})
	}
}

// hasFault reports whether an attempt had a fault armed.
func hasFault(as []report.Attempt) bool {
	for _, a := range as {
		if a.Setup != nil {
			return true
		}
	}
	return false
}

// TestNoRequestNoScript: a counterexample without recorded requests (a
// client check) gives no script, and says why.
func TestNoRequestNoScript(t *testing.T) {
	_, err := repro.Script("w", report.ScenarioReport{ID: "client-key-stable", Verdict: report.Fail,
		Counterexample: &harness.Counterexample{Plan: "p", Violation: "v"}})
	require.ErrorIs(t, err, repro.ErrNoEvidence)
}

// TestScriptSaysWhichAttemptIsALookup: the reproducer of a reconcile
// failure sends the lookup's own request and says it is one.
func TestScriptSaysWhichAttemptIsALookup(t *testing.T) {
	srv, err := fixtures.Start(fixtures.LookupLagging, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	defer srv.Close()
	tool, err := srv.HTTPTool("lookup-lagging", 2*time.Second)
	require.NoError(t, err)
	rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{Scenarios: []scenarios.ID{scenarios.Reconcile}, Checks: 20, Seed: 8, MaxBackoff: 5 * time.Millisecond})
	require.NoError(t, err)
	s := rep.Scenarios[0]
	require.Equal(t, report.Fail, s.Verdict, s.Reason)
	script, err := repro.Script("lookup-lagging", s)
	require.NoError(t, err)
	require.Contains(t, script, "a lookup, no fault (onceproof saw: ok 404, not-found)")
	require.Contains(t, script, "GET /tickets/by-key/")
}
