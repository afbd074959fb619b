package faults_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

// reps is how often each fault is repeated to show it is deterministic.
const reps = 1000

// sink is a tool stand-in that counts whole and torn requests.
type sink struct {
	whole, torn atomic.Int64
	srv         *http.Server
	addr        string
}

func newSink(t *testing.T) *sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &sink{addr: ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || int64(len(b)) != r.ContentLength {
			s.torn.Add(1)
			return
		}
		s.whole.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "committed")
	})}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// waitFor polls cond for up to two seconds.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return cond()
}

const body = `{"subject":"refund 0123456789abcdef","amount":42}`

func rawRequest() []byte {
	return []byte("POST /tickets HTTP/1.1\r\nHost: tool\r\nContent-Type: application/json\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body)
}

// send performs one attempt on a fresh connection and returns the response
// status (0 when none arrived) and the error met.
func send(addr string, timeout time.Duration) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(rawRequest()); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

type backendCase struct {
	name string
	make func(t *testing.T) faults.Backend
}

func backends() []backendCase {
	return []backendCase{
		{"embedded", func(t *testing.T) faults.Backend { return faults.NewEmbedded() }},
		{"remote", func(t *testing.T) faults.Backend {
			url := faultstest.Server(t)
			b, err := faults.NewRemote(context.Background(), url)
			require.NoError(t, err)
			return b
		}},
	}
}

func TestFaultsAreDeterministic(t *testing.T) {
	n := reps
	if testing.Short() {
		n = 50
	}
	tornAt := int64(len(rawRequest()) - len(body)/2)
	type expect struct {
		reaches, torn bool
		refused       bool
		timeout       time.Duration
	}
	cases := []struct {
		fault  faults.Fault
		expect expect
		reason string
	}{
		{faults.LoseResponse{Mode: faults.LoseCut}, expect{reaches: true}, "the tool commits; the caller reads EOF"},
		{faults.LoseResponse{Mode: faults.LoseReset}, expect{reaches: true}, "the tool commits; the caller's connection is reset"},
		{faults.LoseResponse{Mode: faults.LoseBlackhole}, expect{reaches: true, timeout: 20 * time.Millisecond}, "the tool commits; the caller meets its deadline"},
		{faults.FailBeforeServer{Mode: faults.FailRefuse}, expect{refused: true}, "the connection is refused, provably not delivered"},
		{faults.FailBeforeServer{Mode: faults.FailReset}, expect{}, "the request is reset before its first byte is forwarded"},
		{faults.FailBeforeServer{Mode: faults.FailCut}, expect{}, "the request is cut before its first byte is forwarded"},
		{faults.TornRequest{Bytes: tornAt}, expect{torn: true}, "the body is cut in the middle"},
	}
	for _, bc := range backends() {
		t.Run(bc.name, func(t *testing.T) {
			ctx := context.Background()
			backend := bc.make(t)
			defer backend.Close(ctx)
			for _, tc := range cases {
				t.Run(tc.fault.Name(), func(t *testing.T) {
					s := newSink(t)
					p, err := backend.NewProxy(ctx, "determinism", s.addr)
					require.NoError(t, err)
					defer p.Close(ctx)
					require.Equal(t, tc.expect.reaches, tc.fault.Reaches(), tc.reason)
					timeout := time.Second
					if tc.expect.timeout > 0 {
						timeout = tc.expect.timeout
					}
					for i := 0; i < n; i++ {
						wholeBefore, tornBefore := s.whole.Load(), s.torn.Load()
						disarm, err := tc.fault.Arm(ctx, p)
						require.NoError(t, err)
						status, err := send(p.Addr(), timeout)
						require.NoError(t, disarm(ctx))
						require.Error(t, err, "rep %d: %s: a response arrived (status %d): the fault did not fire", i, tc.reason, status)
						if tc.expect.refused {
							require.True(t, errors.Is(err, syscall.ECONNREFUSED), "rep %d: want connection refused, got %v", i, err)
						}
						if tc.expect.timeout > 0 {
							var ne net.Error
							require.True(t, errors.As(err, &ne) && ne.Timeout(), "rep %d: want a timeout, got %v", i, err)
						}
						if tc.expect.reaches {
							require.True(t, waitFor(func() bool { return s.whole.Load() == wholeBefore+1 }),
								"rep %d: %s: the tool did not receive the request", i, tc.reason)
						}
						if tc.expect.torn {
							require.True(t, waitFor(func() bool { return s.torn.Load() == tornBefore+1 }),
								"rep %d: %s: the tool did not see a torn request", i, tc.reason)
						}
						// The fault is gone once disarmed: a plain attempt goes through.
						status, err = send(p.Addr(), time.Second)
						require.NoError(t, err, "rep %d: plain attempt after disarm", i)
						require.Equal(t, http.StatusOK, status)
					}
					// Only the attempts the fault lets through were ever received whole.
					want := int64(n)
					if tc.expect.reaches {
						want = int64(2 * n)
					}
					require.True(t, waitFor(func() bool { return s.whole.Load() == want }), "whole requests: got %d, want %d", s.whole.Load(), want)
					if !tc.expect.torn {
						require.Zero(t, s.torn.Load(), "torn requests")
					}
				})
			}
			t.Run("hold", func(t *testing.T) { testHold(t, backend, n) })
		})
	}
}

// testHold shows that held requests do not reach the tool until released,
// including one whose caller gave up, and then all arrive.
func testHold(t *testing.T, backend faults.Backend, n int) {
	ctx := context.Background()
	s := newSink(t)
	p, err := backend.NewProxy(ctx, "determinism-hold", s.addr)
	require.NoError(t, err)
	defer p.Close(ctx)
	hn := n / 10 // each rep waits for a caller's deadline
	for i := 0; i < hn; i++ {
		before := s.whole.Load()
		release, err := faults.Hold{}.Arm(ctx, p)
		require.NoError(t, err)
		// The original times out while held.
		_, err = send(p.Addr(), 20*time.Millisecond)
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "rep %d: held original: want timeout, got %v", i, err)
		// The retry is sent while the original is still held.
		var wg sync.WaitGroup
		var status int
		var rerr error
		wg.Add(1)
		go func() { defer wg.Done(); status, rerr = send(p.Addr(), 5*time.Second) }()
		time.Sleep(5 * time.Millisecond)
		require.Equal(t, before, s.whole.Load(), "rep %d: a held request reached the tool before release", i)
		require.NoError(t, release(ctx))
		wg.Wait()
		require.NoError(t, rerr, "rep %d: retry after release", i)
		require.Equal(t, http.StatusOK, status)
		require.True(t, waitFor(func() bool { return s.whole.Load() == before+2 }),
			"rep %d: original and retry should both reach the tool on release, got %d", i, s.whole.Load()-before)
	}
	require.Zero(t, s.torn.Load())
}

func TestNewRemoteRejectsBadURL(t *testing.T) {
	for _, tc := range []struct{ url, reason string }{
		{"127.0.0.1:8474", "no scheme"},
		{"ftp://127.0.0.1:8474", "not http"},
		{"http://", "no host"},
	} {
		_, err := faults.NewRemote(context.Background(), tc.url)
		require.Error(t, err, tc.reason)
		require.True(t, strings.Contains(err.Error(), "toxiproxy"), tc.reason)
	}
}

func TestRemoteReplacesLeftoverProxy(t *testing.T) {
	ctx := context.Background()
	url := faultstest.Server(t)
	s := newSink(t)
	// An earlier run left a proxy with the same name, pointing elsewhere.
	_, err := toxiclient.NewClient(url).CreateProxy("leftover", "127.0.0.1:0", "127.0.0.1:1")
	require.NoError(t, err)

	r, err := faults.NewRemote(ctx, url)
	require.NoError(t, err)
	defer r.Close(ctx)
	p, err := r.NewProxy(ctx, "leftover", s.addr)
	require.NoError(t, err)
	require.Equal(t, s.addr, p.Upstream())
	status, err := send(p.Addr(), time.Second)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
}

func TestRemoteReportsFailedLookup(t *testing.T) {
	cases := []struct {
		status int
		body   string
		reason string
	}{
		{http.StatusInternalServerError, `{"error":"boom","status":500}`, "a server error is not a missing proxy"},
		{http.StatusForbidden, `{"error":"no","status":403}`, "only a 404 means there is no leftover"},
		{http.StatusNotFound, `not json`, "a 404 that is not Toxiproxy's error body is not trusted"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/proxies" && r.Method == http.MethodGet {
					_, _ = io.WriteString(w, `{}`)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			r, err := faults.NewRemote(context.Background(), srv.URL)
			require.NoError(t, err)
			_, err = r.NewProxy(context.Background(), "x", "127.0.0.1:1")
			require.Error(t, err, tc.reason)
			require.Contains(t, err.Error(), `look up proxy "x"`, tc.reason)
		})
	}
}

// TestFaultsSayWhereTheyStrike: every fault names its phase, and a fault
// reaches the tool exactly when its phase lets the request through.
func TestFaultsSayWhereTheyStrike(t *testing.T) {
	for _, tc := range []struct {
		fault  faults.Fault
		phase  faults.Phase
		reason string
	}{
		{faults.LoseResponse{Mode: faults.LoseCut}, faults.ResponseLost, "the response is cut"},
		{faults.LoseResponse{Mode: faults.LoseBlackhole}, faults.ResponseLost, "the response is swallowed"},
		{faults.FailBeforeServer{Mode: faults.FailRefuse}, faults.BeforeServer, "the proxy refuses"},
		{faults.FailBeforeServer{Mode: faults.FailCut}, faults.BeforeServer, "cut at the first byte"},
		{faults.TornRequest{Bytes: 10}, faults.Torn, "the body is cut"},
		{faults.Hold{}, faults.Held, "held until released"},
		{faults.CutConnection{Stream: faults.Upstream, Bytes: 3}, faults.Dependency, "a dependency link"},
		{faults.ResetConnection{Stream: faults.Downstream}, faults.Dependency, "a dependency link"},
	} {
		require.Equal(t, tc.phase, tc.fault.Phase(), tc.reason)
		require.Contains(t, faults.Phases(), tc.fault.Phase(), tc.reason)
		reaches := tc.phase == faults.ResponseLost || tc.phase == faults.Held
		if tc.phase != faults.Dependency {
			require.Equal(t, reaches, tc.fault.Reaches(), tc.reason)
		}
		s := tc.fault.Setup()
		require.True(t, s.Disable != (len(s.Toxics) > 0), "%s: a setup disables the proxy or adds toxics: %+v", tc.reason, s)
	}
}
