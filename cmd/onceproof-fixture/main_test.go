package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args       []string
		wantStderr string
		reason     string
	}{
		{[]string{"--kind", "bogus"}, "valid kinds: correct, naive", "unknown kind names the valid ones"},
		{[]string{"--nope"}, "flag provided but not defined", "unknown flag"},
		{[]string{"--work", "soon"}, "invalid value", "bad duration"},
		{[]string{"--work", "-1ms"}, "--work must be positive", "negative duration"},
		{[]string{"extra"}, "unexpected arguments", "positional arguments"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := run(t.Context(), tt.args, &stdout, &stderr)
		assert.Equal(t, 2, code, tt.reason)
		assert.Contains(t, stderr.String(), tt.wantStderr, tt.reason)
		assert.Empty(t, stdout.String(), tt.reason)
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--kind", "naive", "--listen", "127.0.0.1:0", "--work", "1ms"}, pw, io.Discard)
		pw.Close()
	}()

	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "stdout line %q", line)

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(url+"/tickets", "application/json", strings.NewReader(`{"subject":"cli-A","amount":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancellation")
	}
}

func TestBinarySignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "onceproof-fixture")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--kind", "check-then-act", "--listen", "127.0.0.1:0")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), line)

			require.NoError(t, cmd.Process.Signal(sig))
			waitErr := make(chan error, 1)
			go func() { waitErr <- cmd.Wait() }()
			select {
			case err := <-waitErr:
				assert.NoError(t, err, "clean exit on %v", sig)
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("no exit after %v", sig)
			}
		})
	}

	cmd := exec.Command(bin, "--kind", "bogus")
	out, err = cmd.CombinedOutput()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 2, exitErr.ExitCode())
	assert.Contains(t, string(out), "unknown fixture kind")
}
