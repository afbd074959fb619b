package scenarios

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
)

// countingOracle counts the queries it answers.
type countingOracle struct {
	harness.Oracle
	n atomic.Int64
}

func (o *countingOracle) Count(ctx context.Context, m string) (int, error) {
	o.n.Add(1)
	return o.Oracle.Count(ctx, m)
}

// BenchmarkScenario measures trials per second of each scenario against the
// correct fixture with the embedded Toxiproxy, and the floor: the same
// number of bare HTTP requests (attempts plus oracle queries, each on a fresh
// loopback connection) sent straight to the fixture. x-floor is how many times
// slower a trial is than its floor.
func BenchmarkScenario(b *testing.B) {
	for _, id := range All() {
		b.Run(string(id), func(b *testing.B) {
			ctx := context.Background()
			srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			cfgTool, err := srv.HTTPConfig("correct", 100*time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			oracle := &countingOracle{Oracle: cfgTool.Oracle}
			cfgTool.Oracle = oracle
			tool, err := harness.NewHTTPTool(cfgTool)
			if err != nil {
				b.Fatal(err)
			}
			backend := faults.NewEmbedded()
			defer backend.Close(ctx)
			s, err := harness.Open(ctx, backend, tool, harness.KeyUUID)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(ctx)
			cfg := Config{MaxBackoff: 10 * time.Millisecond}
			draw := drawerFor(id)
			plans := rapid.Custom(func(t *rapid.T) func(*trial) (result, error) { return draw(t, cfg, tool) })

			attempts := 0
			oracle.n.Store(0)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				exec := plans.Example(i)
				tr := newTrial(ctx, s)
				res, err := exec(tr)
				if err != nil {
					b.Fatal(err)
				}
				if res.violation != "" || res.invalid != "" {
					b.Fatalf("trial %d: violation %q invalid %q", i, res.violation, res.invalid)
				}
				attempts += len(tr.attemptLog())
			}
			elapsed := time.Since(start)
			b.StopTimer()

			requests := attempts + int(oracle.n.Load())
			floor := bareRequests(b, srv.URL(), requests)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "trials/s")
			b.ReportMetric(float64(b.N)/floor.Seconds(), "floor-trials/s")
			b.ReportMetric(elapsed.Seconds()/floor.Seconds(), "x-floor")
		})
	}
}

// bareRequests sends n plain requests to the fixture, each on a new
// connection, and returns how long they took.
func bareRequests(b *testing.B, base string, n int) time.Duration {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	for i := range n {
		var resp *http.Response
		var err error
		if i%2 == 0 {
			resp, err = client.Post(base+"/tickets", "application/json",
				strings.NewReader(`{"subject":"floor","amount":1}`))
		} else {
			resp, err = client.Get(base + "/count?marker=floor")
		}
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return time.Since(start)
}

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
			Timeout: 100 * time.Millisecond, ResultID: "/id", Oracle: oracle})
		if err != nil {
			b.Fatal(err)
		}
		backend := tool.Backend()
		if backend == nil {
			e := faults.NewEmbedded()
			defer e.Close(ctx)
			backend = e
		}
		s, err := harness.Open(ctx, backend, tool, harness.KeyUUID)
		if err != nil {
			b.Fatal(err)
		}
		cfg := Config{MaxBackoff: 10 * time.Millisecond}
		trials := 0
		start := time.Now()
		for _, id := range []ID{LostResponse, PreServerError} {
			draw := drawerFor(id)
			plans := rapid.Custom(func(t *rapid.T) func(*trial) (result, error) { return draw(t, cfg, tool) })
			for i := 0; i < b.N; i++ {
				res, err := plans.Example(i)(newTrial(ctx, s))
				if err != nil || res.violation != "" {
					b.Fatalf("%s: %v %s", id, err, res.violation)
				}
				trials++
			}
		}
		perSecond[mode] = float64(trials) / time.Since(start).Seconds()
		_ = s.Close(ctx)
		_ = env.Close(ctx)
	}
	b.ReportMetric(perSecond[harness.ToxiproxyEmbedded], "embedded-trials/s")
	b.ReportMetric(perSecond[harness.ToxiproxyContainer], "container-trials/s")
	b.ReportMetric(perSecond[harness.ToxiproxyEmbedded]/perSecond[harness.ToxiproxyContainer], "container-vs-embedded")
}
