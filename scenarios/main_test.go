package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"go.uber.org/goleak"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/container"
)

// TestMain fails the package if a certification leaves goroutines behind
// (proxies, links, fixture servers, attempts) or containers and networks.
func TestMain(m *testing.M) {
	fixtures.ServeStdioIfAsked() // the test binary as the stdio fixture's command
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
		if err := findLeaks(
			goleak.IgnoreAnyFunction("github.com/testcontainers/testcontainers-go.(*Reaper).connect.func1"),
			// Toxiproxy's own, still in v2.12.0: a link's NoopToxic hands each
			// chunk on in a plain channel send (not a select on its Interrupt).
			// When what follows it stops reading - limit_data's stub closes once
			// its budget is spent, or the write goroutine exits on a write error -
			// a chunk that still arrives on that connection blocks it for good;
			// the link is already out of its ToxicCollection, so neither removing
			// the toxic nor stopping the proxy frees it. One per such connection,
			// it ends with the process. faults.TestToxiproxyStrandsStubAfterCut
			// reproduces it and fails once an upgrade fixes it.
			goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines left behind: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// findLeaks is goleak.Find given a few seconds' grace: on a loaded machine
// a goroutine that is already finishing (an oracle's last dial after its
// trial ended) can outlast goleak's own retries. A real leak outlasts this
// too.
func findLeaks(opts ...goleak.Option) error {
	var err error
	for range 5 {
		if err = goleak.Find(opts...); err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
	return err
}

// countOwn counts the containers and networks this process labelled.
func countOwn() (int, error) {
	ctx := context.Background()
	docker, err := container.DockerClient(ctx)
	if err != nil {
		return 0, err
	}
	defer docker.Close()
	f := client.Filters{}.Add("label", container.LabelPID+"="+strconv.Itoa(os.Getpid()))
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
