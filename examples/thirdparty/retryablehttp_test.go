package thirdparty_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// retryableOp is one ticket created through hashicorp/go-retryablehttp, an
// agent's retry wrapper as many tools are written: a key minted per call
// and set on the request, which the client re-sends unchanged on every
// retry.
func retryableOp(backoff retryablehttp.Backoff) scenarios.ClientOp {
	return func(ctx context.Context, baseURL string, n int) error {
		c := retryablehttp.NewClient()
		c.Logger = nil
		c.RetryMax = 4
		c.RetryWaitMin = 5 * time.Millisecond
		c.RetryWaitMax = 80 * time.Millisecond
		c.HTTPClient.Timeout = 2 * time.Second
		// The client's own pooled transport, as users run it: when a reused
		// connection breaks, net/http re-sends a request that carries an
		// Idempotency-Key at once. client-backoff must not count that
		// re-send as a backoff step (it would mix two of DefaultBackoff's
		// steps under one retry number and make them look jittered).
		defer c.HTTPClient.CloseIdleConnections()
		c.Backoff = backoff
		body := fmt.Sprintf(`{"subject":"ticket %d","amount":%d}`, n, 10+n)
		req, err := retryablehttp.NewRequestWithContext(ctx, "POST", baseURL+"/tickets", strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
}

// TestRetryableHTTPAsAgentWrapper certifies go-retryablehttp (v0.7.8) as
// the agent's retry wrapper, with each of its backoff functions. It keeps
// the key (the request is re-sent as it was), leaves 4xx alone (its
// default policy retries 429 and 5xx only) and is bounded (RetryMax); what
// differs is the backoff. DefaultBackoff honours Retry-After but doubles
// its wait with no jitter: agents that failed together retry together.
// LinearJitterBackoff spreads its waits but ignores Retry-After.
// RateLimitLinearJitterBackoff does both.
func TestRetryableHTTPAsAgentWrapper(t *testing.T) {
	pass := map[scenarios.ID]report.Verdict{}
	for _, id := range scenarios.ClientChecks() {
		pass[id] = report.Pass
	}
	with := func(id scenarios.ID, v report.Verdict) map[scenarios.ID]report.Verdict {
		m := maps.Clone(pass)
		m[id] = v
		return m
	}
	for _, tc := range []struct {
		name    string
		backoff retryablehttp.Backoff
		want    map[scenarios.ID]report.Verdict
		because string // in the failing check's reason
		reason  string
	}{
		{"default-backoff", retryablehttp.DefaultBackoff, with(scenarios.ClientBackoff, report.Fail), "not jittered",
			"DefaultBackoff doubles the wait with no jitter"},
		{"linear-jitter", retryablehttp.LinearJitterBackoff, with(scenarios.ClientBackoff, report.Fail), "Retry-After",
			"LinearJitterBackoff never reads Retry-After"},
		{"rate-limit-linear-jitter", retryablehttp.RateLimitLinearJitterBackoff, pass, "",
			"RateLimitLinearJitterBackoff honours Retry-After and spreads its waits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := scenarios.RunClient(context.Background(), retryableOp(tc.backoff), scenarios.ClientConfig{Name: tc.name, Trials: 20})
			require.NoError(t, err)
			require.Empty(t, rep.Error)
			require.Len(t, rep.Scenarios, len(tc.want))
			for _, s := range rep.Scenarios {
				require.Equal(t, tc.want[scenarios.ID(s.ID)], s.Verdict, "%s × %s (%s): %s\n%v", tc.name, s.ID, tc.reason, s.Reason, s.Counterexample)
				if s.Verdict == report.Fail {
					require.Contains(t, s.Reason, tc.because, tc.reason)
				}
			}
		})
	}
}
