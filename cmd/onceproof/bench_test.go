package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/fixtures"
)

// countingHandler counts the requests a fixture answers.
type countingHandler struct {
	h http.Handler
	n atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.h.ServeHTTP(w, r)
}

// serveFixture serves a fixture kind on a loopback port, counting requests.
func serveFixture(b *testing.B, kind fixtures.Kind) (addr string, h *countingHandler) {
	b.Helper()
	tool, err := fixtures.New(kind, fixtures.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	h = &countingHandler{h: tool}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close(); _ = tool.Close() })
	return ln.Addr().String(), h
}

// BenchmarkCertifyExample is what a user runs: `onceproof certify` of the
// shipped example spec (examples/create-ticket.yaml: timeout 2s, the default
// 100 checks and backoff, every HTTP scenario) against the correct fixture,
// through the CLI. Per run it reports the wall seconds per tool, trials per
// second, and the ratio to the floor measured in the same run: the same
// number of bare loopback HTTP exchanges (one per request the fixture
// answered: attempts and oracle queries), each on a fresh connection, one
// after another, with a server that answers at once (the network alone).
func BenchmarkCertifyExample(b *testing.B) {
	addr, h := serveFixture(b, fixtures.Correct)
	spec := exampleSpec(b, addr)
	out := filepath.Join(b.TempDir(), "report.json")
	var wall time.Duration
	var trials, exchanges int64
	for b.Loop() {
		before := h.n.Load()
		start := time.Now()
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"certify", "--spec", spec, "--quiet", "--format", "json", "--out", out}, io.Discard, &stderr)
		wall += time.Since(start)
		if code != exitOK {
			b.Fatalf("certify exited %d: %s", code, stderr.String())
		}
		trials += reportTrials(b, out)
		exchanges += h.n.Load() - before
	}
	n := float64(b.N)
	floor := bareExchanges(b, int(exchanges/int64(b.N)))
	b.ReportMetric(wall.Seconds()/n, "s/tool")
	b.ReportMetric(float64(trials)/wall.Seconds(), "trials/s")
	b.ReportMetric(float64(exchanges)/n, "exchanges/tool")
	b.ReportMetric(floor.Seconds(), "floor-s")
	b.ReportMetric(wall.Seconds()/n/floor.Seconds(), "x-floor")
}

// BenchmarkDemo is `onceproof demo` as shipped: every fixture tool (HTTP,
// MCP, agent-side wrappers) with its documented verdicts.
func BenchmarkDemo(b *testing.B) {
	var wall time.Duration
	for b.Loop() {
		start := time.Now()
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"demo", "--quiet"}, io.Discard, &stderr)
		wall += time.Since(start)
		if code != exitOK {
			b.Fatalf("demo exited %d: %s", code, stderr.String())
		}
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/demo")
}

// exampleSpec is the shipped example spec, pointed at addr.
func exampleSpec(b *testing.B, addr string) string {
	src, err := os.ReadFile("../../examples/create-ticket.yaml")
	if err != nil {
		b.Fatal(err)
	}
	spec := filepath.Join(b.TempDir(), "create-ticket.yaml")
	if err := os.WriteFile(spec, []byte(strings.ReplaceAll(string(src), "127.0.0.1:8080", addr)), 0o644); err != nil {
		b.Fatal(err)
	}
	return spec
}

// reportTrials sums the checks of a JSON report.
func reportTrials(b *testing.B, path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var r struct {
		Tools []struct {
			Scenarios []struct {
				Checks int64 `json:"checks"`
			} `json:"scenarios"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, t := range r.Tools {
		for _, s := range t.Scenarios {
			n += s.Checks
		}
	}
	return n
}

// bareExchanges sends n plain requests to a loopback server that answers
// at once, alternating a POST and a GET, each on a fresh connection, one
// after another, and returns how long they took.
func bareExchanges(b *testing.B, n int) time.Duration {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"t-1","count":1}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	for i := range n {
		var resp *http.Response
		var err error
		if i%2 == 0 {
			req, _ := http.NewRequest(http.MethodPost, base+"/tickets", strings.NewReader(`{"subject":"floor","amount":1}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fixtures.NewIdempotencyKey())
			resp, err = client.Do(req)
		} else {
			resp, err = client.Get(base + "/count?marker=floor")
		}
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return time.Since(start)
}

// BenchmarkChaos is `onceproof chaos` of the shipped example spec against
// the correct fixture: 32 agents, 5,000 operations, a 20% fault rate. It
// reports operations per second.
func BenchmarkChaos(b *testing.B) {
	addr, _ := serveFixture(b, fixtures.Correct)
	spec := exampleSpec(b, addr)
	out := filepath.Join(b.TempDir(), "chaos.json")
	var ops, seconds float64
	for b.Loop() {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"chaos", "--spec", spec, "--agents", "32", "--ops", "5000", "--fault-rate", "0.2", "--quiet", "--format", "json", "--out", out}, io.Discard, &stderr)
		if code != exitOK {
			b.Fatalf("chaos exited %d: %s", code, stderr.String())
		}
		data, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		var doc struct {
			Chaos struct {
				Ops      float64 `json:"ops"`
				Duration float64 `json:"duration_ns"`
			} `json:"chaos"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			b.Fatal(err)
		}
		ops += doc.Chaos.Ops
		seconds += doc.Chaos.Duration / 1e9
	}
	b.ReportMetric(ops/seconds, "ops/s")
}
