package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/moby/moby/client"
	"go.uber.org/goleak"

	"github.com/onceproof/onceproof/harness"
)

// TestMain fails the package if a certification leaves goroutines behind
// (proxies, links, fixture servers, attempts) or containers and networks.
func TestMain(m *testing.M) {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	if _, err := os.Stat("/.dockerenv"); err == nil && os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	code := m.Run()
	if n, err := countOwn(); err == nil && n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d containers or networks of this test process are left behind\n", n)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreAnyFunction("github.com/testcontainers/testcontainers-go.(*Reaper).connect.func1"),
			// Toxiproxy (v2.5.0) strands a link's first stub when the link's
			// writer fails while data is in flight and the proxy is then
			// stopped: nothing drains its channel. It is Toxiproxy's own, per
			// torn connection, and ends with the process.
			goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines left behind: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// countOwn counts the containers and networks this process labelled.
func countOwn() (int, error) {
	ctx := context.Background()
	docker, err := harness.DockerClient(ctx)
	if err != nil {
		return 0, err
	}
	defer docker.Close()
	f := client.Filters{}.Add("label", harness.LabelPID+"="+strconv.Itoa(os.Getpid()))
	cs, err := docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, err
	}
	ns, err := docker.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return 0, err
	}
	return len(cs.Items) + len(ns.Items), nil
}

func ownContainers(t *testing.T) int {
	t.Helper()
	n, err := countOwn()
	if err != nil {
		t.Fatalf("count containers: %v", err)
	}
	return n
}
