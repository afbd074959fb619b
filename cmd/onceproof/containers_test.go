package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/report"
)

const containerSpec = "../../examples/containers/tickets.yaml"

// containersOf counts the containers and networks labelled with pid.
func containersOf(t *testing.T, pid int) int {
	t.Helper()
	ctx := context.Background()
	docker, err := container.DockerClient(ctx)
	require.NoError(t, err)
	defer docker.Close()
	f := client.Filters{}.Add("label", container.LabelPID+"="+strconv.Itoa(pid))
	cs, err := docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	require.NoError(t, err)
	ns, err := docker.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	require.NoError(t, err)
	return len(cs.Items) + len(ns.Items)
}

func buildOnceproof(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceproof")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestContainerCertifyByHand runs the CLI on the container example as a user
// would, then interrupts one run with SIGINT and kills another with SIGKILL:
// nothing may be left behind (the killed run's leftovers go with sweep).
func TestContainerCertifyByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containers")
	}
	docker, err := container.DockerClient(context.Background())
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	docker.Close()
	bin := buildOnceproof(t)
	env := append(os.Environ(), "TESTCONTAINERS_RYUK_DISABLED=true", "TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1")

	t.Run("a verdict with its start-to-verdict time", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "report.json")
		cmd := exec.Command(bin, "certify", "--spec", containerSpec, "--tool", "tickets-memory-dedupe", "--local-images",
			"--checks", "3", "--max-backoff", "10ms", "--format", "json", "--out", out)
		cmd.Env = env
		stderr, _ := cmd.CombinedOutput()
		require.Equal(t, exitFailed, cmd.ProcessState.ExitCode(), "%s", stderr)
		require.Contains(t, string(stderr), "containers ready in")
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var rep report.Report
		require.NoError(t, json.Unmarshal(data, &rep))
		tr := rep.Tools[0]
		require.Positive(t, tr.Startup, "startup time is reported")
		require.Greater(t, tr.Duration, tr.Startup, "start-to-verdict covers the run")
		verdicts := map[string]report.Verdict{}
		for _, s := range tr.Scenarios {
			verdicts[s.ID] = s.Verdict
		}
		require.Equal(t, report.Fail, verdicts["crash-restart"])
		require.Equal(t, report.Pass, verdicts["lost-response"])
		require.Zero(t, containersOf(t, cmd.ProcessState.Pid()))
	})

	t.Run("no Docker engine is exit 3", func(t *testing.T) {
		cmd := exec.Command(bin, "certify", "--spec", containerSpec, "--tool", "tickets-postgres", "--local-images")
		cmd.Env = append(env, "DOCKER_HOST=unix:///nonexistent/docker.sock")
		out, _ := cmd.CombinedOutput()
		require.Equal(t, exitUnreachable, cmd.ProcessState.ExitCode(), "%s", out)
		require.Contains(t, string(out), "no Docker engine reachable")
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run("interrupted by "+sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "certify", "--spec", containerSpec, "--tool", "tickets-memory-dedupe", "--local-images", "--checks", "1000")
			cmd.Env = env
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			pid := cmd.Process.Pid
			require.Eventually(t, func() bool { return strings.Contains(out.String(), "containers ready") },
				2*time.Minute, 50*time.Millisecond, "containers never came up: %s", &out)
			time.Sleep(500 * time.Millisecond) // inside the scenarios
			require.NoError(t, cmd.Process.Signal(sig))
			_ = cmd.Wait()
			if sig == syscall.SIGINT {
				require.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode(), out.String())
				require.Zero(t, containersOf(t, pid), "SIGINT must remove every container and network")
				return
			}
			require.Positive(t, containersOf(t, pid), "a killed run cannot clean up")
			sweep := exec.Command(bin, "sweep")
			sweep.Env = env
			so, err := sweep.CombinedOutput()
			require.NoError(t, err, "%s", so)
			require.Zero(t, containersOf(t, pid), "sweep removes what the killed run left: %s", so)
		})
	}
}

// syncBuffer is a bytes.Buffer a child process writes to while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
