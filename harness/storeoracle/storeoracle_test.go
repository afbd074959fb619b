package storeoracle_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/harnesstest"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/harness/storeoracle"
)

func TestOraclesEndWhenTheirContextIsCancelled(t *testing.T) {
	silent := harnesstest.NewSilentListener(t)
	addr := silent.Addr().String()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		silent.Accepted <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	httpOracle, err := harness.NewHTTPOracle(hang.URL+"/count/{{.Marker}}", "/n")
	require.NoError(t, err)
	httpOracle.Timeout = spec.MaxOracleTimeout
	moving := 0
	for _, tc := range []struct {
		reason string
		oracle harness.Oracle
		// started, when set, is signalled by the oracle's own work; else
		// the oracle is cancelled after a short while.
		started <-chan struct{}
	}{
		{"an HTTP oracle that never answers", httpOracle, silent.Accepted},
		{"a command oracle whose shell child keeps its output open", &harness.CommandOracle{Argv: []string{"sh", "-c", "sleep 30; echo 1"}, Timeout: spec.MaxOracleTimeout}, nil},
		{"a settle wait", harness.Settled(harness.OracleFunc(func(context.Context, string) (int, error) { moving++; return moving, nil }), spec.MaxSettle), nil},
		{"a SQL oracle whose server never answers", &storeoracle.SQLOracle{DSN: "postgres://u:p@" + addr + "/db?sslmode=disable", Query: "select $1::int", Timeout: spec.MaxOracleTimeout}, silent.Accepted},
		{"a Redis oracle whose server never answers", &storeoracle.RedisOracle{URL: "redis://" + addr + "/0", Command: []*harness.Template{harness.MustTemplate("SCARD"), harness.MustTemplate("{{.Marker}}")}, Timeout: spec.MaxOracleTimeout}, silent.Accepted},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			started := tc.started
			if started == nil {
				c := make(chan struct{})
				time.AfterFunc(200*time.Millisecond, func() { close(c) })
				started = c
			}
			ctx, cancelledAt := harnesstest.CancelSoon(t, started)
			_, err := tc.oracle.Count(ctx, "m")
			took := time.Since(cancelledAt())
			harness.CloseOracle(tc.oracle)
			require.Error(t, err)
			assert.ErrorIs(t, err, harness.ErrOracle)
			assert.Less(t, took, harnesstest.Promptly)
		})
	}
}
