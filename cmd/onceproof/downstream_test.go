package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/fixtures/fixturetest"
)

// TestCertifyDownstreamByHand: for a tool started by hand, the spec's
// downstream names a fixed loopback address; the tool is started with that
// URL, onceproof listens there while it certifies, says so, and judges the
// tool's calls to it.
func TestCertifyDownstreamByHand(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	pg, err := fixturetest.StartPostgres(ctx)
	if errors.Is(err, fixturetest.ErrNotInstalled) {
		t.Skipf("needs PostgreSQL 15: %v", err)
	}
	require.NoError(t, err)
	defer pg.Close()
	for _, tc := range []struct {
		kind   fixtures.Kind
		code   int
		output string
		reason string
	}{
		{fixtures.DownstreamStable, exitOK, "downstream             PASS", "a stable key downstream is agent-ready"},
		{fixtures.DownstreamNoKey, exitFailed, "downstream             FAIL", "no key downstream fails"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			dsn, err := pg.CreateDatabase(t.Context())
			require.NoError(t, err)
			listen := freeAddr(t)
			srv, err := fixtures.StartContext(t.Context(), tc.kind, "127.0.0.1:0", fixtures.Options{Postgres: dsn, Downstream: "http://" + listen, Log: io.Discard})
			require.NoError(t, err)
			defer srv.Close()
			spec := strings.Join([]string{
				"version: 1",
				"tools:",
				"  - name: charge",
				"    downstream: {name: payments, env: PAYMENTS_URL, listen: \"" + listen + "\"}",
				"    http:",
				"      url: " + srv.URL() + "/tickets",
				"      headers: {Content-Type: application/json}",
				`      body: '{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}'`,
				"    result_id: /id",
				`    oracle: {http: {url: "` + srv.URL() + `/count?marker={{.Marker}}", count: /count}}`,
			}, "\n") + "\n"
			path := filepath.Join(t.TempDir(), "tools.yaml")
			require.NoError(t, os.WriteFile(path, []byte(spec), 0o644))
			code, out, errs := runCLI(t, "certify", "--spec", path, "--scenario", "downstream", "--checks", "5", "--max-backoff", "10ms")
			require.Equal(t, tc.code, code, "%s\nstdout:\n%s\nstderr:\n%s", tc.reason, out, errs)
			require.Contains(t, out, tc.output, tc.reason)
			require.Contains(t, errs, "onceproof plays payments at http://"+listen+" (start the tool with PAYMENTS_URL=http://"+listen+")")
		})
	}
}
