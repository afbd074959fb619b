package scenarios_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/fixtures/fixturetest"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// startDownstreamFixture starts the provider onceproof plays and a fixture
// of kind that calls it, and returns the tool with its downstream.
func startDownstreamFixture(t *testing.T, pg *fixturetest.Postgres, kind fixtures.Kind) *harness.HTTPTool {
	t.Helper()
	d, err := harness.NewDownstream(harness.DownstreamSpec{Name: "payments"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	dsn, err := pg.CreateDatabase(t.Context())
	require.NoError(t, err)
	srv, err := fixtures.StartContext(t.Context(), kind, "127.0.0.1:0", fixtures.Options{Postgres: dsn, Downstream: d.URL(), Log: io.Discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := srv.HTTPConfig(string(kind), fastTimeout)
	require.NoError(t, err)
	c.Downstream = d
	tool, err := harness.NewHTTPTool(c)
	require.NoError(t, err)
	return tool
}

// TestDownstreamFixtureVerdicts: a tool that forwards a key derived from
// its caller's passes the downstream scenario; one that mints a new key per
// call to its provider, and one that sends none, fail it, with the
// provider's calls in the counterexample. Every other scenario passes: they
// claim keys like the correct fixture.
func TestDownstreamFixtureVerdicts(t *testing.T) {
	pg := hostPostgres(t)
	setRapid(t, 20, 0)
	for _, kind := range fixtures.DownstreamKinds() {
		t.Run(string(kind), func(t *testing.T) {
			tool := startDownstreamFixture(t, pg, kind)
			require.Contains(t, scenarios.Applicable(tool), scenarios.Downstream)
			want := fixtures.Expected(kind)
			require.NotEmpty(t, want[string(scenarios.Downstream)], "%s documents its downstream verdict", kind)
			rep := mustRun(t, tool, fast)
			require.Empty(t, rep.Error)
			for _, s := range rep.Scenarios {
				require.Equal(t, want[s.ID], verdictWord(s.Verdict), "%s × %s: %s\n%v", kind, s.ID, s.Reason, s.Counterexample)
				if s.ID != string(scenarios.Downstream) {
					continue
				}
				if s.Verdict == report.Pass {
					require.Equal(t, s.Checks, s.ValidTrials, "every trial's fault fired and was retried: %s", s.Reason)
					continue
				}
				c := s.Counterexample
				t.Logf("%s:\n%s", kind, c)
				var out []harness.Attempt
				for _, a := range c.Attempts {
					if a.Link != "" {
						require.Equal(t, "payments", a.Link)
						out = append(out, a)
					}
				}
				require.GreaterOrEqual(t, len(out), 2, "the provider's calls are in the counterexample")
				require.Contains(t, c.String(), "payments")
				provider := c.Effects[len(c.Effects)-1]
				require.True(t, strings.HasPrefix(provider.Marker, "payments:"), "the provider's effects are reported: %+v", provider)
				switch kind {
				case fixtures.DownstreamNoKey:
					require.Empty(t, out[0].Key)
				case fixtures.DownstreamFreshKey:
					require.NotEqual(t, out[0].Key, out[1].Key, "a new key per call")
				}
			}
		})
	}
}

// TestDownstreamNeedsMarker: a tool whose calls to its provider never carry
// the operation's marker cannot be judged: the scenario is inconclusive,
// never a pass. (A relay between the fixture and the provider strips the
// markers from the calls.)
func TestDownstreamNeedsMarker(t *testing.T) {
	pg := hostPostgres(t)
	setRapid(t, 10, 0)
	d, err := harness.NewDownstream(harness.DownstreamSpec{Name: "payments"})
	require.NoError(t, err)
	defer d.Close()
	markers := regexp.MustCompile(`onceproof-[0-9a-f]+-m[0-9]+`)
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, d.URL()+r.URL.Path, bytes.NewReader(markers.ReplaceAll(body, []byte("x"))))
		req.Header = r.Header.Clone()
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer relay.Close()
	dsn, err := pg.CreateDatabase(t.Context())
	require.NoError(t, err)
	srv, err := fixtures.StartContext(t.Context(), fixtures.DownstreamStable, "127.0.0.1:0", fixtures.Options{Postgres: dsn, Downstream: relay.URL, Log: io.Discard})
	require.NoError(t, err)
	defer srv.Close()
	c, err := srv.HTTPConfig("no-marker", fastTimeout)
	require.NoError(t, err)
	c.Downstream = d
	tool, err := harness.NewHTTPTool(c)
	require.NoError(t, err)
	cfg := fast
	cfg.Scenarios = []scenarios.ID{scenarios.Downstream}
	rep := mustRun(t, tool, cfg)
	s := rep.Scenarios[0]
	require.Equal(t, report.Inconclusive, s.Verdict, s.Reason)
	require.Contains(t, s.Reason, "carried the operation's marker")
	require.Positive(t, d.Stray(), "the calls were answered as stray")
}
