package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/container"
)

// BenchmarkToxiproxyModes compares the embedded Toxiproxy with the Toxiproxy
// container on the same tool (the correct fixture as a container): trials
// per second of lost-response and pre-server-error in each mode, and their
// ratio (container-vs-embedded above 1 means the container is slower).
func BenchmarkToxiproxyModes(b *testing.B) {
	ctx := context.Background()
	docker, err := container.DockerClient(ctx)
	if err != nil {
		b.Skipf("no Docker engine: %v", err)
	}
	defer docker.Close()
	images := container.LocalImages{Map: container.DefaultLocalImages(), Docker: docker}
	// One environment per mode, closed on every path by Cleanup; both modes
	// run in one loop body, so the ratio is of the same run (b.Loop may be
	// called only once per benchmark).
	type bench struct {
		tool   harness.Tool
		trials int
		spent  time.Duration
	}
	modes := []container.ToxiproxyMode{container.ToxiproxyEmbedded, container.ToxiproxyContainer}
	benches := map[container.ToxiproxyMode]*bench{}
	for _, mode := range modes {
		env, err := container.StartEnv(ctx, container.ContainerSpec{
			Toxiproxy: mode,
			Tool: container.Service{Name: "tool", Image: "onceproof/fixture:dev", Port: 8080,
				Env: map[string]string{"ONCEPROOF_FIXTURE_KIND": "correct"}, Wait: container.Wait{Log: "listening on"}},
		}, container.EnvOptions{Images: images})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = env.Close(context.Background()) })
		oracle, err := harness.NewHTTPOracle("http://tool:8080/count?marker={{.Marker}}", "/count")
		if err != nil {
			b.Fatal(err)
		}
		tool, err := container.NewContainerTool(env, harness.HTTPConfig{Name: "correct", URL: "http://tool:8080/tickets",
			Headers: map[string]string{"Content-Type": "application/json"}, Body: fixtures.Body,
			Timeout: 2 * time.Second, ResultID: "/id", Oracle: oracle})
		if err != nil {
			b.Fatal(err)
		}
		benches[mode] = &bench{tool: tool}
	}
	for b.Loop() {
		for _, mode := range modes {
			bm := benches[mode]
			start := time.Now()
			rep, err := Run(ctx, bm.tool, Config{Scenarios: []ID{LostResponse, PreServerError}, Checks: 50})
			if err != nil || !rep.AgentReady {
				b.Fatalf("%s: %v %+v", mode, err, rep)
			}
			bm.spent += time.Since(start)
			for _, s := range rep.Scenarios {
				bm.trials += s.Checks
			}
		}
	}
	perSecond := map[container.ToxiproxyMode]float64{}
	for mode, bm := range benches {
		perSecond[mode] = float64(bm.trials) / bm.spent.Seconds()
	}
	b.ReportMetric(perSecond[container.ToxiproxyEmbedded], "embedded-trials/s")
	b.ReportMetric(perSecond[container.ToxiproxyContainer], "container-trials/s")
	b.ReportMetric(perSecond[container.ToxiproxyEmbedded]/perSecond[container.ToxiproxyContainer], "container-vs-embedded")
}
