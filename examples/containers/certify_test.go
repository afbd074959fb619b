package containers_test

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/scenarios"
)

func TestMain(m *testing.M) {
	// No registry here: never start the reaper (its image would be pulled),
	// and reach mapped ports on loopback when running inside a container.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	if _, err := os.Stat("/.dockerenv"); err == nil {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	os.Exit(m.Run())
}

// TestTicketsPostgresIsAgentReady starts the tool image and its Postgres on a
// private network, puts the Toxiproxy container on it, and certifies every
// scenario — including crash-restart and a fault on the tool's database link.
func TestTicketsPostgresIsAgentReady(t *testing.T) {
	ctx := context.Background()
	docker, err := container.DockerClient(ctx)
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	defer docker.Close()

	sp, err := spec.Load("tickets.yaml")
	require.NoError(t, err)
	ts, err := sp.Find("tickets-postgres")
	require.NoError(t, err)

	// Our CI has no registry: run postgres:15 and the toxiproxy image from
	// local builds (make images). With a registry, pass container.EnvOptions{}.
	tool, stop, err := ts.Start(ctx, container.EnvOptions{
		Images: container.LocalImages{Map: container.DefaultLocalImages(), Docker: docker},
	})
	require.NoError(t, err)
	defer stop(ctx)

	// Container trials cost more (crash-restart restarts the tool): keep
	// the default run short unless -rapid.checks says otherwise.
	if f := flag.Lookup("rapid.checks"); f.Value.String() == f.DefValue {
		require.NoError(t, flag.Set("rapid.checks", "5"))
		defer flag.Set("rapid.checks", f.DefValue)
	}
	scenarios.Certify(t, tool, scenarios.Config{MaxBackoff: 20 * time.Millisecond})
}
