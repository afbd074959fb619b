package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// envMap is a getenv over a fixed environment.
func envMap(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args       []string
		wantStderr string
		reason     string
	}{
		{[]string{"--nope"}, "flag provided but not defined", "unknown flag"},
		{[]string{"--work", "soon"}, "invalid value", "bad duration"},
		{[]string{"--work", "0s"}, "--work must be positive", "zero duration"},
		{[]string{"--work", "-1ms"}, "--work must be positive", "negative duration"},
		{[]string{"--json=maybe"}, "invalid boolean value", "bad boolean"},
		{[]string{"extra"}, "unexpected arguments", "positional arguments"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := run(t.Context(), tt.args, envMap(nil), &stdout, &stderr)
		assert.Equal(t, 2, code, tt.reason)
		assert.Contains(t, stderr.String(), tt.wantStderr, tt.reason)
		assert.Empty(t, stdout.String(), tt.reason)
	}
}

func TestRunListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var stdout, stderr strings.Builder
	code := run(t.Context(), []string{"--listen", ln.Addr().String()}, envMap(nil), &stdout, &stderr)
	assert.Equal(t, 1, code, "the address is taken")
	assert.Contains(t, stderr.String(), "listening on "+ln.Addr().String())
	assert.Empty(t, stdout.String(), "never announces listening")
}

// startRun runs run in the background and returns the announced endpoint, a
// cancel func and the exit status channel.
func startRun(t *testing.T, args []string, env map[string]string) (string, context.CancelFunc, <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, envMap(env), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	endpoint, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "stdout line %q", line)
	return endpoint, cancel, done
}

// waitExit waits for the exit status of a run.
func waitExit(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancellation")
		return -1
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		reason string
	}{
		{"sse", []string{"--listen", "127.0.0.1:0", "--work", "1ms"}, nil, "default SSE responses with sessions"},
		{"json", []string{"--listen", "127.0.0.1:0", "--json"}, nil, "JSON responses"},
		{"stateless", []string{"--listen", "127.0.0.1:0", "--json", "--stateless"}, nil, "no sessions"},
		{"env", []string{"--json"}, map[string]string{envListen: "127.0.0.1:0"}, "--listen from the environment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint, cancel, done := startRun(t, tt.args, tt.env)
			defer cancel()
			require.True(t, strings.HasPrefix(endpoint, "http://127.0.0.1:"), endpoint)
			require.True(t, strings.HasSuffix(endpoint, "/mcp"), endpoint)

			httpClient := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			client := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "0"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
				Endpoint: endpoint, HTTPClient: httpClient, MaxRetries: -1, DisableStandaloneSSE: true,
			}, nil)
			require.NoError(t, err, tt.reason)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_ticket",
				Arguments: map[string]any{"subject": "cli mk-cli", "amount": 3, "idempotency_key": "k"}})
			require.NoError(t, err, tt.reason)
			assert.False(t, res.IsError, tt.reason)
			require.NoError(t, cs.Close())

			resp, err := httpClient.Get(strings.TrimSuffix(endpoint, "/mcp") + "/count?marker=mk-cli")
			require.NoError(t, err)
			var count struct{ Count int }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&count))
			resp.Body.Close()
			assert.Equal(t, 1, count.Count, tt.reason)

			cancel()
			assert.Equal(t, 0, waitExit(t, done), tt.reason)
		})
	}
}

// buildBinary builds the command with CGO_ENABLED=0 into a temporary
// directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceproof-mcp-fixture")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func TestBinarySignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--listen", "127.0.0.1:0")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), line)
			assert.True(t, strings.HasSuffix(strings.TrimSpace(line), "/mcp"), line)

			// An open standalone SSE stream must not hold up the shutdown.
			endpoint := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
			client := mcp.NewClient(&mcp.Implementation{Name: "signal-test", Version: "0"}, nil)
			httpClient := &http.Client{Transport: &http.Transport{}}
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient, MaxRetries: -1}, nil)
			require.NoError(t, err)
			time.Sleep(50 * time.Millisecond) // let the GET stream open

			began := time.Now()
			require.NoError(t, cmd.Process.Signal(sig))
			waitErr := make(chan error, 1)
			go func() { waitErr <- cmd.Wait() }()
			select {
			case err := <-waitErr:
				assert.NoError(t, err, "clean exit on %v", sig)
				assert.Less(t, time.Since(began), shutdownTimeout, "the SSE stream was ended, not waited for")
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("no exit after %v", sig)
			}
			_ = cs.Close()
			httpClient.CloseIdleConnections()
		})
	}

	cmd := exec.Command(bin, "--bogus")
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 2, exitErr.ExitCode())
	assert.Contains(t, string(out), "flag provided but not defined")
}
