package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/report"
)

// writeSpec writes the README's spec for a tool at addr (timeout shortened to
// keep lost-response trials quick).
func writeSpec(t *testing.T, addr string) string {
	t.Helper()
	src, err := os.ReadFile("../../examples/create-ticket.yaml")
	require.NoError(t, err)
	text := strings.ReplaceAll(string(src), "127.0.0.1:8080", addr)
	path := filepath.Join(t.TempDir(), "tools.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func startKind(t *testing.T, kind fixtures.Kind) string {
	t.Helper()
	srv, err := fixtures.Start(kind, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv.Addr()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCertifyExitCodes(t *testing.T) {
	correct := writeSpec(t, startKind(t, fixtures.Correct))
	naive := writeSpec(t, startKind(t, fixtures.Naive))
	gone := writeSpec(t, freeAddr(t))
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\ntools:\n  - name: x\n    htp: {}\n"), 0o644))
	remote := filepath.Join(t.TempDir(), "remote.yaml")
	src, err := os.ReadFile(correct)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(remote, bytes.ReplaceAll(src, []byte("http://127.0.0.1:"), []byte("http://10.1.2.3:")), 0o644))

	fast := []string{"--checks", "10", "--max-backoff", "10ms"}
	for _, tc := range []struct {
		args   []string
		code   int
		output string
		reason string
	}{
		{append([]string{"certify", "--spec", correct}, fast...), exitOK, "create-ticket: agent-ready", "a correct tool is agent-ready"},
		{append([]string{"certify", "--spec", naive}, fast...), exitFailed, "replay: onceproof certify --spec", "a naive tool fails with a replay command"},
		{append([]string{"certify", "--spec", gone}, fast...), exitUnreachable, "preflight failed", "nothing listens at the tool's address"},
		{[]string{"certify", "--spec", bad}, exitUsage, "bad.yaml:4", "an unknown field names file and line"},
		{[]string{"certify", "--spec", remote}, exitUsage, "remote", "a non-loopback target needs --allow-remote"},
		{[]string{"certify"}, exitUsage, "--spec is required", "no spec"},
		{[]string{"certify", "--spec", correct, "--scenario", "nope"}, exitUsage, "unknown scenario", "bad scenario id"},
		{[]string{"certify", "--spec", correct, "--tool", "nope"}, exitUsage, "nope", "unknown tool"},
		{[]string{"certify", "--spec", correct, "--checks", "0"}, exitUsage, "--checks", "bad checks"},
		{[]string{"certify", "--spec", correct, "--format", "xml"}, exitUsage, "flag -format: want one of text, json", "bad format"},
		{[]string{"certify", "--spec", filepath.Join(t.TempDir(), "missing.yaml")}, exitUsage, "missing.yaml", "no such file"},
		{[]string{"frobnicate"}, exitUsage, "unknown command", "bad command"},
		{[]string{"certify", "--spec", correct, "--baseline", filepath.Join(t.TempDir(), "missing.yaml")}, exitUsage, "--baseline: baseline ", "an unreadable baseline is a usage error"},
		{[]string{"certify", "--spec", correct, "--toxiproxy", "not a url"}, exitUsage, `--toxiproxy "not a url": want the toxiproxy-server API's URL`, "a malformed Toxiproxy URL is a usage error"},
		{[]string{"certify", "--spec", correct, "--max-backoff", "1000h"}, exitUsage, "--max-backoff 1000h0m0s: too long, at most 1m", "a backoff beyond its maximum"},
		{[]string{"certify", "--spec", correct, "--shrink-time", "2h"}, exitUsage, "--shrink-time 2h0m0s: too long, at most 1h", "a shrink time beyond its maximum"},
		{[]string{"certify-client", "--exec", "true", "--max-op-time", "2h"}, exitUsage, "--max-op-time 2h0m0s: too long, at most 1h", "an operation time beyond its maximum"},
		{[]string{"certify", "--spec", correct, "--toxiproxy", "http://10.0.0.1:8474"}, exitUsage, "--toxiproxy: remote target 10.0.0.1:8474", "a remote Toxiproxy is refused before it is dialled"},
		{[]string{"certify", "--spec", correct, "--toxiproxy", "http://toxi.example:8474"}, exitUsage, "toxi.example is not a loopback name", "a Toxiproxy name is refused without a DNS query"},
		{[]string{"discover", "--mcp", "http://10.0.0.1:9/mcp"}, exitUsage, "--mcp: remote target 10.0.0.1:9", "a remote MCP server is refused before it is dialled"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			require.Equal(t, tc.code, code, "%s\nstdout:\n%s\nstderr:\n%s", tc.reason, out, errOut)
			require.Contains(t, out+errOut, tc.output, tc.reason)
		})
	}
}

func TestCertifyJSONReport(t *testing.T) {
	spec := writeSpec(t, startKind(t, fixtures.CheckThenAct))
	out := filepath.Join(t.TempDir(), "report.json")
	code, _, errOut := runCLI(t, "certify", "--spec", spec, "--checks", "10", "--max-backoff", "10ms",
		"--seed", "99", "--format", "json", "--out", out)
	require.Equal(t, exitFailed, code, errOut)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Version int `json:"version"`
		Tools   []struct {
			Name       string `json:"name"`
			AgentReady bool   `json:"agent_ready"`
			Scenarios  []struct {
				ID             string          `json:"id"`
				Passed         bool            `json:"passed"`
				Checks         int             `json:"checks"`
				ValidTrials    int             `json:"valid_trials"`
				Seed           uint64          `json:"seed"`
				Counterexample json.RawMessage `json:"counterexample"`
				Repro          string          `json:"repro"`
			} `json:"scenarios"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Equal(t, 1, rep.Version)
	require.Len(t, rep.Tools, 1)
	require.False(t, rep.Tools[0].AgentReady)
	failed := 0
	for _, s := range rep.Tools[0].Scenarios {
		require.Positive(t, s.Checks, s.ID)
		require.NotZero(t, s.Seed, s.ID)
		if !s.Passed {
			failed++
			require.Equal(t, "concurrent-duplicate", s.ID)
			require.NotEmpty(t, s.Counterexample)
			require.Contains(t, s.Repro, "--scenario concurrent-duplicate --seed ")
		}
	}
	require.Equal(t, 1, failed)
}

// TestByHand starts the fixture binary and the onceproof binary as a user
// would, and checks the exit codes through os.Exit, with the embedded and a
// remote Toxiproxy.
func TestByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	for _, pkg := range []string{"github.com/onceproof/onceproof/cmd/onceproof", "github.com/onceproof/onceproof/cmd/onceproof-fixture",
		"github.com/Shopify/toxiproxy/v2/cmd/server"} {
		name := filepath.Base(pkg)
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	fixture := func(kind string) string {
		cmd := exec.Command(filepath.Join(dir, "onceproof-fixture"), "--kind", kind, "--listen", "127.0.0.1:0")
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		return strings.TrimPrefix(strings.TrimSpace(line), "listening on http://")
	}
	toxiAddr := freeAddr(t)
	host, port, _ := net.SplitHostPort(toxiAddr)
	toxi := exec.Command(filepath.Join(dir, "server"), "-host", host, "-port", port)
	toxi.Env = append(os.Environ(), "LOG_LEVEL=error")
	require.NoError(t, toxi.Start())
	t.Cleanup(func() { _ = toxi.Process.Kill(); _ = toxi.Wait() })
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", toxiAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	correct, naive := writeSpec(t, fixture("correct")), writeSpec(t, fixture("naive"))
	for _, tc := range []struct {
		args   []string
		code   int
		reason string
	}{
		{[]string{"certify", "--spec", correct, "--checks", "5"}, exitOK, "embedded Toxiproxy, correct tool"},
		{[]string{"certify", "--spec", naive, "--checks", "5"}, exitFailed, "embedded Toxiproxy, naive tool"},
		{[]string{"certify", "--spec", correct, "--checks", "5", "--toxiproxy", "http://" + toxiAddr}, exitOK, "remote Toxiproxy, correct tool"},
		{[]string{"certify", "--spec", naive, "--checks", "5", "--toxiproxy", "http://" + toxiAddr}, exitFailed, "remote Toxiproxy, naive tool"},
		{[]string{"certify", "--spec", correct, "--toxiproxy", "http://" + freeAddr(t)}, exitUnreachable, "remote Toxiproxy not running"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "onceproof"), tc.args...)
			out, _ := cmd.CombinedOutput()
			require.Equal(t, tc.code, cmd.ProcessState.ExitCode(), "%s\n%s", tc.reason, out)
		})
	}

	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run("a signal ends a run whose attempts may take an hour, within a second: "+signalName(sig), func(t *testing.T) {
			addr, accepted := silentTool(t)
			cmd := exec.Command(filepath.Join(dir, "onceproof"), "certify", "--spec", silentSpec(t, addr), "--checks", "5")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			select {
			case <-accepted: // the preflight call is on the wire, waiting for its answer
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("the preflight call never reached the tool")
			}
			time.Sleep(100 * time.Millisecond)
			sent := time.Now()
			require.NoError(t, cmd.Process.Signal(sig))
			_ = cmd.Wait()
			took := time.Since(sent)
			require.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode(), out.String())
			require.Less(t, took, time.Second, "the run must end within 1s of the signal\n%s", out.String())
			require.Contains(t, out.String(), "onceproof: interrupted ("+signalName(sig)+")")
			require.NotContains(t, out.String(), "context canceled")
		})
	}

	t.Run("interrupted run leaves no proxy behind", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(dir, "onceproof"), "certify", "--spec", correct, "--checks", "100000",
			"--toxiproxy", "http://"+toxiAddr)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return proxies(t, toxiAddr) > 0 }, 10*time.Second, 10*time.Millisecond,
			"the run never created its proxy")
		time.Sleep(300 * time.Millisecond) // well inside the scenarios
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		_ = cmd.Wait()
		require.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode(), out.String())
		require.Zero(t, proxies(t, toxiAddr), "proxies left on the toxiproxy-server after SIGINT")
	})
}

// silentTool listens on loopback and never answers a request; accepted
// receives a value for every connection.
func silentTool(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ch := make(chan struct{}, 16)
	var conns []net.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String(), ch
}

// silentSpec is a spec for a tool at addr that never answers, with an hour
// as its per-attempt timeout.
func silentSpec(t *testing.T, addr string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "silent.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`version: 1
tools:
  - name: silent
    http:
      url: http://`+addr+`/tickets
      body: '{"subject":"{{.Marker}}"}'
      timeout: 1h
    oracle:
      command: [echo, "0"]
`), 0o644))
	return path
}

// proxies counts the proxies a toxiproxy-server holds.
func proxies(t *testing.T, addr string) int {
	resp, err := http.Get("http://" + addr + "/proxies")
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	return len(m)
}

func TestDemoMatchesDocumentation(t *testing.T) {
	code, out, errOut := runCLI(t, "demo", "--checks", "10", "--max-backoff", "10ms")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "Every verdict matches")
	for _, kind := range fixtures.Kinds() {
		if fixtures.Slow(kind) {
			require.NotContains(t, out, string(kind), "a slow kind stays out of the demo")
			continue
		}
		require.Contains(t, out, string(kind))
	}
	require.Contains(t, out, "stripe-as-ietf × key-mismatch FAILED", "the profile decides the codes")
	require.Contains(t, out, "profile ietf: a reused key with another payload must be refused with 422 (got 400")
	require.Contains(t, out, "replay: onceproof demo --tool naive --scenario lost-response --seed ")
}

func TestSignals(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	exited := make(chan int, 1)
	var stderr bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		onSignals(sigs, cancel, &stderr, func(code int) { exited <- code })
	}()

	sigs <- os.Interrupt
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), errInterrupted)
	require.Equal(t, "interrupted (SIGINT)", interruption(ctx), "the first signal cancels the run, saying why")
	select {
	case code := <-exited:
		t.Fatalf("exited with %d on the first signal: the run must get to clean up", code)
	case <-time.After(50 * time.Millisecond):
	}

	sigs <- syscall.SIGTERM
	select {
	case code := <-exited:
		require.Equal(t, exitInterrupted, code, "a second signal exits at once")
	case <-time.After(time.Second):
		t.Fatal("a second signal did not exit")
	}
	<-done
	require.Contains(t, stderr.String(), "interrupted (SIGTERM again)")
}

func TestInterruptedRunSaysSo(t *testing.T) {
	addr, accepted := silentTool(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-accepted
		time.Sleep(50 * time.Millisecond)
		cancel(fmt.Errorf("%w (SIGINT)", errInterrupted))
	}()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"certify", "--spec", silentSpec(t, addr), "--quiet"}, &out, &errb)
	require.Equal(t, exitInterrupted, code, errb.String())
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, "onceproof: interrupted (SIGINT)\n", errb.String())
}

func TestVerdictCode(t *testing.T) {
	mk := func(vs ...report.Verdict) *report.Report {
		tr := report.ToolReport{Name: "t"}
		for _, v := range vs {
			tr.Scenarios = append(tr.Scenarios, report.ScenarioReport{Verdict: v})
		}
		return &report.Report{Tools: []report.ToolReport{tr}}
	}
	for _, tc := range []struct {
		report *report.Report
		code   int
		reason string
	}{
		{mk(report.Pass, report.Pass), exitOK, "all passed"},
		{mk(report.Pass, report.Fail), exitFailed, "one failed"},
		{mk(report.Inconclusive, report.Pass), exitInconclusive, "inconclusive is not a pass"},
		{mk(report.Inconclusive, report.Fail), exitFailed, "a failure outranks inconclusive"},
		{&report.Report{Tools: []report.ToolReport{{Name: "t", Error: "preflight"}}}, exitUnreachable, "preflight failed"},
	} {
		require.Equal(t, tc.code, verdictCode(tc.report), tc.reason)
	}
}

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want, reason string }{
		{"tools.yaml", "tools.yaml", "plain"},
		{"my tools.yaml", "'my tools.yaml'", "space"},
		{"it's", `'it'\''s'`, "quote"},
		{"", "''", "empty"},
	} {
		require.Equal(t, tc.want, shellQuote(tc.in), tc.reason)
	}
}

// slowNaive serves a tool with no idempotency that takes 60ms per write,
// so that shrinking its failure takes a while.
func slowNaive(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	effects := map[string]int{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			n := effects[r.URL.Query().Get("marker")]
			mu.Unlock()
			fmt.Fprintf(w, `{"count":%d}`, n)
			return
		}
		var v struct{ Subject string }
		_ = json.NewDecoder(r.Body).Decode(&v)
		time.Sleep(60 * time.Millisecond)
		mu.Lock()
		effects[strings.TrimPrefix(v.Subject, "refund ")]++
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"x"}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestInterruptWhileShrinkingWritesTheFailure: a run interrupted while it
// shrinks a failure still writes its report, with the smallest case found
// so far marked as such, and exits 130.
func TestInterruptWhileShrinkingWritesTheFailure(t *testing.T) {
	spec := writeSpec(t, slowNaive(t))
	out := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(1500*time.Millisecond, func() { cancel(fmt.Errorf("%w (SIGINT)", errInterrupted)) })
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"certify", "--spec", spec, "--scenario", "lost-response", "--seed", "3", "--quiet", "--format", "json", "--out", out}, &stdout, &stderr)
	require.Equal(t, exitInterrupted, code, stderr.String())
	r, err := report.ReadReport(out)
	require.NoError(t, err, "the report is written")
	s := r.Tools[0].Scenarios[0]
	require.Equal(t, report.Fail, s.Verdict)
	require.NotNil(t, s.Counterexample)
	require.Contains(t, s.Counterexample.Shrink, "interrupted")
}
