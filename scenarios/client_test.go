package scenarios_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// setClientRapid sets rapid's command-line settings for RunClient and
// CertifyClient, and restores them. Shrinking is bounded by shrink.
func setClientRapid(t *testing.T, checks int, seed uint64, shrink time.Duration) {
	t.Helper()
	for name, value := range map[string]string{
		"rapid.checks": strconv.Itoa(checks), "rapid.seed": strconv.FormatUint(seed, 10),
		"rapid.nofailfile": "true", "rapid.shrinktime": shrink.String(),
	} {
		old := flag.Lookup(name).Value.String()
		require.NoError(t, flag.Set(name, value))
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
}

func clientWord(v report.Verdict) string {
	switch v {
	case report.Pass:
		return "pass"
	case report.Fail:
		return "fail"
	}
	return "unknown"
}

// clientSoak is how often the wrapper verdicts are asserted (ONCEPROOF_SOAK
// for more).
func clientSoak(t *testing.T) int {
	t.Helper()
	if s := os.Getenv("ONCEPROOF_SOAK"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ONCEPROOF_SOAK")
		return n
	}
	return 2
}

// requireEvidence checks what a verdict carries: a failure its
// counterexample with the attempt log, a pass valid trials.
func requireEvidence(t *testing.T, s report.ScenarioReport, what string) {
	t.Helper()
	switch s.Verdict {
	case report.Fail:
		require.NotNil(t, s.Counterexample, "%s: a failure carries its evidence", what)
		require.NotEmpty(t, s.Counterexample.Attempts, what)
		require.NotEmpty(t, s.Counterexample.Plan, what)
		require.Equal(t, s.Reason, s.Counterexample.Violation, what)
	case report.Pass:
		require.Positive(t, s.ValidTrials, "%s: a pass needs valid trials", what)
		require.True(t, s.Passed, what)
	default:
		require.NotEmpty(t, s.Reason, "%s: an unknown verdict says why", what)
	}
}

func TestClientChecksMatchFixtures(t *testing.T) {
	var ids []string
	for _, id := range scenarios.ClientChecks() {
		ids = append(ids, string(id))
		got, err := scenarios.ParseClientID(string(id))
		require.NoError(t, err)
		require.Equal(t, id, got)
	}
	for _, w := range fixtures.Wrappers() {
		exp := fixtures.WrapperExpected(w)
		require.Len(t, exp, len(ids), w)
		for _, id := range ids {
			require.Contains(t, exp, id, "%s documents every client check", w)
		}
	}
	_, err := scenarios.ParseClientID("lost-response")
	require.ErrorContains(t, err, "client-key-present", "server scenarios are not client checks")
}

// TestClientWrapperVerdicts asserts that every wrapper fixture gets exactly
// its documented verdicts, several times over (ONCEPROOF_SOAK=N for more).
func TestClientWrapperVerdicts(t *testing.T) {
	setClientRapid(t, 10, 0, time.Second)
	reps := clientSoak(t)
	for _, w := range fixtures.Wrappers() {
		t.Run(string(w), func(t *testing.T) {
			t.Parallel()
			want := fixtures.WrapperExpected(w)
			for rep := range reps {
				r, err := scenarios.RunClient(context.Background(), w.Op(), scenarios.ClientConfig{Name: string(w)})
				require.NoError(t, err)
				require.Equal(t, string(w), r.Name)
				require.Len(t, r.Scenarios, len(scenarios.ClientChecks()))
				for _, s := range r.Scenarios {
					what := fmt.Sprintf("rep %d: %s × %s: %s", rep, w, s.ID, s.Reason)
					if s.Counterexample != nil {
						what += "\n" + s.Counterexample.String()
					}
					require.Equal(t, want[s.ID], clientWord(s.Verdict), what)
					requireEvidence(t, s, what)
				}
				require.Equal(t, w == fixtures.GoodWrapper, r.AgentReady)
			}
		})
	}
}

// TestCertifyClientGoodWrapper is the go test API on the reference wrapper.
func TestCertifyClientGoodWrapper(t *testing.T) {
	setClientRapid(t, 10, 0, time.Second)
	scenarios.CertifyClient(t, fixtures.GoodWrapper.Op())
}

// testWrapper is a configurable wrapper for the rules' edge cases. Its
// defaults are the reference behaviour, without jitter knobs.
type testWrapper struct {
	// key returns attempt's key for the operation (ok false: no header).
	key func(opKey string, body []byte, attempt int) (string, bool)
	// delay is the wait before retry r (1 for the first).
	delay func(r int) time.Duration
	// honourRetryAfter waits at least Retry-After.
	honourRetryAfter bool
	// retryAll retries every failure, 4xx included.
	retryAll    bool
	maxAttempts int // 0: until the context ends
	// okOn4xx reports a 4xx as success; swallow reports success when it
	// gives up.
	okOn4xx, swallow bool
	// background gives up after the first failure and retries once in the
	// background.
	background bool
	// silent sends nothing at all.
	silent bool

	wg sync.WaitGroup
}

func fullJitter(r int) time.Duration {
	p := fixtures.FastRetryPolicy()
	return p.Backoff(r)
}

func (w *testWrapper) op(ctx context.Context, baseURL string, n int) error {
	if w.silent {
		return errors.New("not configured: no request sent")
	}
	client := fixtures.NewRetryHTTPClient()
	body := fixtures.WrapperBody(n)
	opKey := fixtures.NewIdempotencyKey()
	send := func(ctx context.Context, attempt int) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/tickets", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if w.key != nil {
			if k, ok := w.key(opKey, body, attempt); ok {
				req.Header.Set("Idempotency-Key", k)
			}
		} else {
			req.Header.Set("Idempotency-Key", opKey)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, nil
	}
	for attempt := 1; ; attempt++ {
		resp, err := send(ctx, attempt)
		if err == nil && resp.StatusCode/100 == 2 {
			return nil
		}
		final4xx := err == nil && resp.StatusCode/100 == 4 && resp.StatusCode != 409 && resp.StatusCode != 429
		if final4xx && w.okOn4xx {
			return nil
		}
		if final4xx && !w.retryAll {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		if w.background {
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				time.Sleep(time.Millisecond)
				_, _ = send(context.WithoutCancel(ctx), attempt+1)
			}()
			return errors.New("failed; retrying in the background")
		}
		if w.maxAttempts > 0 && attempt >= w.maxAttempts {
			if w.swallow {
				return nil
			}
			return errors.New("gave up")
		}
		d := w.delay(attempt)
		if w.honourRetryAfter && resp != nil {
			if ra, ok := fixtures.RetryAfter(resp.Header, time.Now()); ok && ra > d {
				d = ra
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// TestClientRules shows each rule failing (or unknown) for the wrapper that
// breaks it, and only for the check that judges it.
func TestClientRules(t *testing.T) {
	setClientRapid(t, 10, 0, time.Second)
	exponential := func(base time.Duration) func(int) time.Duration {
		return func(r int) time.Duration { return min(base<<(r-1), 50*time.Millisecond) }
	}
	for _, tc := range []struct {
		w      *testWrapper
		cfg    scenarios.ClientConfig
		check  scenarios.ID
		want   string
		reason string
		detail string // in the verdict's reason
	}{
		{&testWrapper{silent: true}, scenarios.ClientConfig{}, scenarios.ClientKeyPresent, "unknown",
			"a wrapper that makes no attempt shows nothing", "made no attempt in 10 trials"},
		{&testWrapper{silent: true}, scenarios.ClientConfig{}, scenarios.ClientBackoff, "unknown",
			"no attempt is unknown for every check, the probed one too", "not configured"},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 6,
			key: func(k string, _ []byte, _ int) (string, bool) { return "alice@example.com/" + k, true }},
			scenarios.ClientConfig{}, scenarios.ClientKeyNoPII, "fail", "an e-mail address in the key", `e-mail address "alice@example.com"`},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 6,
			key: func(k string, _ []byte, _ int) (string, bool) { return "alice%40example.com-" + k, true }},
			scenarios.ClientConfig{}, scenarios.ClientKeyNoPII, "fail", "a URL-encoded e-mail address in the key", "e-mail address"},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 6,
			key: func(k string, body []byte, _ int) (string, bool) {
				var v struct{ Subject string }
				_ = json.Unmarshal(body, &v)
				return v.Subject + "/" + k, true
			}},
			scenarios.ClientConfig{}, scenarios.ClientKeyNoPII, "fail", "a body value in the key", `the request's value "op `},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 6,
			key: func(string, []byte, int) (string, bool) { return "the-key", true }},
			scenarios.ClientConfig{}, scenarios.ClientKeyStable, "fail", "one key for every operation", "carried the same key"},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 6,
			key: func(string, []byte, int) (string, bool) { return "", true }},
			scenarios.ClientConfig{}, scenarios.ClientKeyPresent, "fail", "an empty key header is no key", "empty Idempotency-Key"},
		{&testWrapper{delay: exponential(4 * time.Millisecond), honourRetryAfter: true, maxAttempts: 6},
			scenarios.ClientConfig{Ops: 2}, scenarios.ClientBackoff, "fail", "exponential backoff without jitter", "not jittered"},
		{&testWrapper{delay: func(int) time.Duration { return 5 * time.Millisecond }, honourRetryAfter: true, maxAttempts: 6},
			scenarios.ClientConfig{}, scenarios.ClientBackoff, "fail", "a constant delay does not grow", "do not grow"},
		{&testWrapper{delay: fullJitter, maxAttempts: 6},
			scenarios.ClientConfig{}, scenarios.ClientBackoff, "fail", "good backoff that ignores Retry-After", "Retry-After"},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 2},
			scenarios.ClientConfig{}, scenarios.ClientBackoff, "unknown", "two attempts at most: too few retries to judge growth", "too few retries"},
		{&testWrapper{delay: func(int) time.Duration { return time.Millisecond }},
			scenarios.ClientConfig{}, scenarios.ClientBounded, "fail", "retries forever (until cancelled)", "want at most 10"},
		{&testWrapper{delay: func(int) time.Duration { return 60 * time.Millisecond }, maxAttempts: 3},
			scenarios.ClientConfig{Ops: 1, MaxOpTime: 100 * time.Millisecond}, scenarios.ClientBounded, "fail", "takes longer than MaxOpTime", "want at most 100ms"},
		{&testWrapper{delay: fullJitter, background: true},
			scenarios.ClientConfig{Ops: 1}, scenarios.ClientBounded, "fail", "retries after the operation returned", "in the background"},
		{&testWrapper{delay: fullJitter, maxAttempts: 6, swallow: true},
			scenarios.ClientConfig{}, scenarios.ClientBounded, "fail", "reports success when it gives up", "reported success, but none"},
		{&testWrapper{delay: fullJitter, maxAttempts: 6, okOn4xx: true},
			scenarios.ClientConfig{}, scenarios.ClientNoRetry4xx, "fail", "reports a 4xx as success", "reported success although"},
		{&testWrapper{delay: fullJitter, retryAll: true, maxAttempts: 5},
			scenarios.ClientConfig{}, scenarios.ClientNoRetry4xx, "fail", "retries a 4xx, with backoff", "a 4xx is final"},
		{&testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 1},
			scenarios.ClientConfig{}, scenarios.ClientKeyStable, "unknown", "never retries: key stability is not shown", "no operation was retried"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.Checks = []scenarios.ID{tc.check}
			r, err := scenarios.RunClient(context.Background(), tc.w.op, cfg)
			tc.w.wg.Wait()
			require.NoError(t, err)
			require.Len(t, r.Scenarios, 1)
			s := r.Scenarios[0]
			what := tc.reason + ": " + s.Reason
			if s.Counterexample != nil {
				what += "\n" + s.Counterexample.String()
			}
			require.Equal(t, tc.want, clientWord(s.Verdict), what)
			require.Contains(t, s.Reason, tc.detail, what)
			requireEvidence(t, s, what)
			require.False(t, r.AgentReady, tc.reason)
		})
	}
}

// TestClientPayloadDerivedKey: a key derived from the payload is stable and
// distinct for distinct payloads, but two identical operations share it.
func TestClientPayloadDerivedKey(t *testing.T) {
	setClientRapid(t, 40, 0, time.Second) // a trial repeats a payload with probability 1/2
	w := &testWrapper{delay: fullJitter, honourRetryAfter: true, maxAttempts: 6,
		key: func(_ string, body []byte, _ int) (string, bool) {
			s := sha256.Sum256(body)
			return hex.EncodeToString(s[:]), true
		}}
	r, err := scenarios.RunClient(context.Background(), w.op, scenarios.ClientConfig{Checks: []scenarios.ID{scenarios.ClientKeyStable}})
	require.NoError(t, err)
	s := r.Scenarios[0]
	require.Equal(t, report.Fail, s.Verdict, s.Reason)
	require.Contains(t, s.Reason, "derived from the payload")
	require.Contains(t, s.Counterexample.Plan, "op-1's payload again, as a new operation")
}

// TestClientSameSeedSameCounterexample: a failing check replayed with the
// seed it reported gets the same shrunk plan.
func TestClientSameSeedSameCounterexample(t *testing.T) {
	setClientRapid(t, 10, 4242, 5*time.Second) // shrinking must reach the smallest plan
	cfg := scenarios.ClientConfig{Checks: []scenarios.ID{scenarios.ClientKeyStable, scenarios.ClientNoRetry4xx}}
	first, err := scenarios.RunClient(context.Background(), fixtures.FreshKeyWrapper.Op(), cfg)
	require.NoError(t, err)
	second, err := scenarios.RunClient(context.Background(), fixtures.FreshKeyWrapper.Op(), cfg)
	require.NoError(t, err)
	require.Equal(t, report.Fail, first.Scenarios[0].Verdict)
	require.Equal(t, first.Scenarios[0].Seed, second.Scenarios[0].Seed)
	require.Equal(t, first.Scenarios[0].Counterexample.Plan, second.Scenarios[0].Counterexample.Plan)
	require.Equal(t, "op-1: lose, then ok; op-2: ok; op-3: ok", first.Scenarios[0].Counterexample.Plan, "shrunk to one lost response")
	require.Equal(t, []harness.Effect{{Marker: "op-1", Count: 2, Want: 1}, {Marker: "op-2", Count: 1, Want: 1}, {Marker: "op-3", Count: 1, Want: 1}},
		first.Scenarios[0].Counterexample.Effects, "a server honouring keys commits op-1 twice")
	require.Equal(t, report.Pass, first.Scenarios[1].Verdict)
}

func TestClientConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg    scenarios.ClientConfig
		op     scenarios.ClientOp
		err    string
		reason string
	}{
		{scenarios.ClientConfig{Checks: []scenarios.ID{scenarios.LostResponse}}, fixtures.GoodWrapper.Op(), "unknown client check", "a server scenario"},
		{scenarios.ClientConfig{Ops: -1}, fixtures.GoodWrapper.Op(), "Ops", "negative ops"},
		{scenarios.ClientConfig{MaxAttempts: -1}, fixtures.GoodWrapper.Op(), "MaxAttempts", "negative attempts"},
		{scenarios.ClientConfig{MaxOpTime: -time.Second}, fixtures.GoodWrapper.Op(), "MaxOpTime", "negative time"},
		{scenarios.ClientConfig{}, nil, "nil ClientOp", "no op"},
	} {
		r, err := scenarios.RunClient(context.Background(), tc.op, tc.cfg)
		require.ErrorContains(t, err, tc.err, tc.reason)
		require.Equal(t, err.Error(), r.Error, tc.reason)
		require.False(t, r.AgentReady, tc.reason)
	}
}

// TestClientProgressAndAttemptLog: progress after every trial, a log line
// per attempt with its key.
func TestClientProgressAndAttemptLog(t *testing.T) {
	setClientRapid(t, 3, 1, time.Second)
	var mu sync.Mutex
	var events []scenarios.Progress
	var log bytes.Buffer
	r, err := scenarios.RunClient(context.Background(), fixtures.GoodWrapper.Op(), scenarios.ClientConfig{
		Name: "w", Checks: []scenarios.ID{scenarios.ClientKeyPresent}, Attempts: &log,
		Progress: func(p scenarios.Progress) { mu.Lock(); events = append(events, p); mu.Unlock() }})
	require.NoError(t, err)
	require.Equal(t, report.Pass, r.Scenarios[0].Verdict)
	require.Len(t, events, 3)
	require.Equal(t, scenarios.Progress{Tool: "w", Scenario: scenarios.ClientKeyPresent, Checks: 3, Valid: 3}, events[2])
	require.Contains(t, log.String(), "w/client-key-present #1 op-1")
	require.Regexp(t, `POST /onceproof/t\d+/1/tickets conn=c\d+ key "[0-9a-f-]{36}" body="{\\"subject\\":\\"op 1\\"`, log.String())
}

func TestExecClientOp(t *testing.T) {
	for _, tc := range []struct {
		command string
		err     string // "" for success
		reason  string
	}{
		{"exit 0", "", "exit 0 is success"},
		{`test "$ONCEPROOF_URL" = http://127.0.0.1:1 && test "$ONCEPROOF_OP" = 7`, "", "the URL and the operation are in the environment"},
		{"exit 3", "exit status 3", "a non-zero exit is failure"},
		{"echo out; echo boom >&2; exit 1", "boom", "the end of standard error explains the failure"},
		{"no-such-command-onceproof", "not found", "a command that does not exist fails"},
	} {
		err := scenarios.ExecClientOp(tc.command)(context.Background(), "http://127.0.0.1:1", 7)
		if tc.err == "" {
			require.NoError(t, err, tc.reason)
		} else {
			require.ErrorContains(t, err, tc.err, tc.reason)
		}
	}
}
