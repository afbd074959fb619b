package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/container"
)

// envWithout is the environment without the variables named.
func envWithout(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// TestContainerQuickStartNeedsNoHostOverride runs the README's container
// quick start with the built binary and no TESTCONTAINERS_HOST_OVERRIDE:
// on a machine that is itself a container (this one, a CI container job)
// onceproof finds where the engine publishes ports by itself. --quiet
// leaves standard error empty (no testcontainers banner), and an image of
// another major version than its local build is refused before anything
// starts.
func TestContainerQuickStartNeedsNoHostOverride(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containers")
	}
	docker, err := container.DockerClient(context.Background())
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	host, err := container.DetectPublishedHost(context.Background(), docker)
	docker.Close()
	require.NoError(t, err)
	t.Logf("published ports at %s: %s", host.Addr, host.Reason)
	bin := buildOnceproof(t)
	env := envWithout("TESTCONTAINERS_HOST_OVERRIDE")

	cmd := exec.Command(bin, "certify", "--spec", containerSpec, "--local-images", "--tool", "tickets-postgres",
		"--scenario", "lost-response", "--checks", "3", "--max-backoff", "10ms", "--quiet", "--format", "json", "--out", filepath.Join(t.TempDir(), "r.json"))
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "the quick start passes with no variable set: %s", stderr.String())
	require.Empty(t, stderr.String(), "--quiet: nothing on standard error, testcontainers' banner included")

	// Not quiet: the local substitutions are named.
	out, err := exec.Command(bin, "certify", "--spec", containerSpec, "--local-images", "--tool", "tickets-postgres",
		"--scenario", "distinct-keys", "--checks", "1", "--max-backoff", "10ms").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "image postgres:15 runs as the local build onceproof/postgres:15")
	require.NotContains(t, string(out), "Connected to docker", "testcontainers' banner is not the CLI's")

	// postgres:16 is not the local PostgreSQL 15.
	data, err := os.ReadFile(containerSpec)
	require.NoError(t, err)
	sp := filepath.Join(t.TempDir(), "pg16.yaml")
	require.NoError(t, os.WriteFile(sp, []byte(strings.ReplaceAll(string(data), "image: postgres:15", "image: postgres:16")), 0o644))
	cmd = exec.Command(bin, "certify", "--spec", sp, "--local-images", "--tool", "tickets-postgres", "--checks", "1")
	cmd.Env = env
	out, _ = cmd.CombinedOutput()
	require.Equal(t, exitUsage, cmd.ProcessState.ExitCode(), "%s", out)
	require.Contains(t, string(out), "image postgres:16 would run as the local build onceproof/postgres:15, major version 15, not 16")
	require.Contains(t, string(out), "--image postgres=onceproof/postgres:15")

	// Chosen explicitly, it runs, and the output says so.
	cmd = exec.Command(bin, "certify", "--spec", sp, "--local-images", "--image", "postgres=onceproof/postgres:15", "--tool", "tickets-postgres",
		"--scenario", "distinct-keys", "--checks", "1", "--max-backoff", "10ms")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "image postgres:16 runs as the local build onceproof/postgres:15 (another major version (16 asked, 15 local), as --image asked)")
}
