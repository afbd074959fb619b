package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

// TestCreateTicketFromSpec certifies a tool described by a spec file: the
// shape a CI pipeline uses. Here the tool is the correct fixture on a free
// port, so the example's fixed port is swapped for it.
func TestCreateTicketFromSpec(t *testing.T) {
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	defer srv.Close()

	src, err := os.ReadFile("create-ticket.yaml")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "create-ticket.yaml")
	text := strings.ReplaceAll(string(src), "127.0.0.1:8080", srv.Addr())
	text = strings.ReplaceAll(text, "timeout: 2s", "timeout: 200ms") // keep lost-response trials short
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))

	sp, err := spec.Load(path)
	require.NoError(t, err)
	ts, err := sp.Find("create-ticket")
	require.NoError(t, err)
	// Start builds the tool its spec describes (HTTP, MCP or container) and
	// starts what it needs; stop removes it.
	tool, stop, err := ts.Start(context.Background(), container.EnvOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = stop(context.Background()) })

	// Each scenario is a subtest; -rapid.checks and -rapid.seed apply.
	scenarios.Certify(t, tool, scenarios.Config{MaxBackoff: 20 * time.Millisecond})
}

// TestToolBuiltInCode certifies a tool described in Go, with an oracle that
// is a Go function.
func TestToolBuiltInCode(t *testing.T) {
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	defer srv.Close()

	tool, err := harness.NewHTTPTool(harness.HTTPConfig{
		Name:     "create-ticket",
		URL:      srv.URL() + "/tickets",
		Headers:  map[string]string{"Content-Type": "application/json"},
		Body:     `{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`,
		Timeout:  200 * time.Millisecond,
		ResultID: "/id",
		Oracle: harness.Settled(harness.OracleFunc(func(_ context.Context, marker string) (int, error) {
			return srv.Tool().Count(marker), nil
		}), 0),
	})
	require.NoError(t, err)
	scenarios.Certify(t, tool, scenarios.Config{MaxBackoff: 20 * time.Millisecond})
}

// TestLongRunningFromSpec certifies a long-running tool from its spec: the
// long-running fixture passes the long-running scenario, and the same spec
// in front of the fixture whose status endpoint forgets finished operations
// fails it.
func TestLongRunningFromSpec(t *testing.T) {
	for _, tc := range []struct {
		kind fixtures.Kind
		want report.Verdict
	}{
		{fixtures.LongRunning, report.Pass},
		{fixtures.LongRunningForgets, report.Fail},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			srv, err := fixtures.Start(tc.kind, "127.0.0.1:0", fixtures.Options{})
			require.NoError(t, err)
			defer srv.Close()
			src, err := os.ReadFile("long-running.yaml")
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "long-running.yaml")
			require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(src), "127.0.0.1:8080", srv.Addr())), 0o644))
			sp, err := spec.Load(path)
			require.NoError(t, err)
			tool, stop, err := sp.Tools[0].Start(context.Background(), container.EnvOptions{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = stop(context.Background()) })
			rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{
				Scenarios: []scenarios.ID{scenarios.LongRunning}, Checks: 10, MaxBackoff: 20 * time.Millisecond})
			require.NoError(t, err)
			require.Len(t, rep.Scenarios, 1)
			require.Equal(t, tc.want, rep.Scenarios[0].Verdict, rep.Scenarios[0].Reason)
		})
	}
}
