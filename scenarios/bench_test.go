package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
)

// BenchmarkToxiproxyModes compares the embedded Toxiproxy with the Toxiproxy
// container on the same tool (the correct fixture as a container): trials
// per second of lost-response and pre-server-error in each mode, and their
// ratio (container-vs-embedded above 1 means the container is slower).
func BenchmarkToxiproxyModes(b *testing.B) {
	ctx := context.Background()
	docker, err := harness.DockerClient(ctx)
	if err != nil {
		b.Skipf("no Docker engine: %v", err)
	}
	defer docker.Close()
	images := harness.LocalImages{Map: harness.DefaultLocalImages(), Docker: docker}
	perSecond := map[harness.ToxiproxyMode]float64{}
	for _, mode := range []harness.ToxiproxyMode{harness.ToxiproxyEmbedded, harness.ToxiproxyContainer} {
		env, err := harness.StartEnv(ctx, harness.ContainerSpec{
			Toxiproxy: mode,
			Tool: harness.Service{Name: "tool", Image: "onceproof/fixture:dev", Port: 8080,
				Env: map[string]string{"ONCEPROOF_FIXTURE_KIND": "correct"}, Wait: harness.Wait{Log: "listening on"}},
		}, harness.EnvOptions{Images: images})
		if err != nil {
			b.Fatal(err)
		}
		oracle, err := harness.NewHTTPOracle("http://tool:8080/count?marker={{.Marker}}", "/count")
		if err != nil {
			b.Fatal(err)
		}
		tool, err := harness.NewContainerTool(env, harness.HTTPConfig{Name: "correct", URL: "http://tool:8080/tickets",
			Headers: map[string]string{"Content-Type": "application/json"}, Body: fixtures.Body,
			Timeout: 2 * time.Second, ResultID: "/id", Oracle: oracle})
		if err != nil {
			b.Fatal(err)
		}
		trials := 0
		start := time.Now()
		for b.Loop() {
			rep, err := Run(ctx, tool, Config{Scenarios: []ID{LostResponse, PreServerError}, Checks: 50})
			if err != nil || !rep.AgentReady {
				b.Fatalf("%s: %v %+v", mode, err, rep)
			}
			for _, s := range rep.Scenarios {
				trials += s.Checks
			}
		}
		perSecond[mode] = float64(trials) / time.Since(start).Seconds()
		_ = env.Close(ctx)
	}
	b.ReportMetric(perSecond[harness.ToxiproxyEmbedded], "embedded-trials/s")
	b.ReportMetric(perSecond[harness.ToxiproxyContainer], "container-trials/s")
	b.ReportMetric(perSecond[harness.ToxiproxyEmbedded]/perSecond[harness.ToxiproxyContainer], "container-vs-embedded")
}
