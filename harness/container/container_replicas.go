package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// maxInboundPorts bounds the inbound proxies a Toxiproxy container serves
// (each is a mapped port): with many replicas, fewer trials overlap.
const maxInboundPorts = 64

// Reserved reports whether port is one the container Toxiproxy listens on
// itself (its API, its inbound proxies), which a service cannot use: the
// Toxiproxy plays every service at the service's own port.
func Reserved(port int) bool {
	return port == toxiproxyAPIPort || port >= inboundPort && port < inboundPort+maxInboundPorts
}

// ReplicaAlias is the network alias of replica i (from 1) of the tool
// container named name when it runs as n replicas: name itself for one,
// name-1 … name-n for several (each of which also answers to name, the way
// a balanced service does inside the network).
func ReplicaAlias(name string, i, n int) string {
	if n <= 1 {
		return name
	}
	return name + "-" + strconv.Itoa(i)
}

// Replicas is how many copies of the tool container run.
func (e *Env) Replicas() int { return e.spec.Replicas }

// ReplicaAddr is "alias:port" of replica i (from 1) inside the network.
func (e *Env) ReplicaAddr(i int) string {
	return net.JoinHostPort(ReplicaAlias(e.spec.Tool.Name, i, e.spec.Replicas), strconv.Itoa(e.spec.Tool.Port))
}

// inboundPorts is how many inbound proxies the Toxiproxy container serves:
// one per replica for each overlapping trial.
func (e *Env) inboundPorts() int {
	return min(e.opts.Inbound*e.spec.Replicas, max(maxInboundPorts, e.spec.Replicas))
}

// startTools starts the replicas of the tool container at once, each with
// the downstream's URL in its environment when the tool has one.
func (e *Env) startTools(ctx context.Context) error {
	n := e.spec.Replicas
	e.tools = make([]*testcontainers.DockerContainer, n)
	errs := make([]error, n)
	env := maps.Clone(e.spec.Tool.Env)
	if d := e.downstream; d != nil && d.Env() != "" {
		if env == nil {
			env = map[string]string{}
		}
		env[d.Env()] = d.URL()
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := e.spec.Tool
			s.Env = env
			aliases := []string{s.Name}
			if n > 1 {
				s.Name = ReplicaAlias(s.Name, i+1, n)
				aliases = []string{s.Name, e.spec.Tool.Name}
			}
			e.tools[i], errs[i] = e.start(ctx, s, aliases)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	e.tool = e.tools[0]
	e.aliasFirst()
	return nil
}

// aliasFirst makes the tool's own name resolve to the first replica's
// mapped port, when it runs as several.
func (e *Env) aliasFirst() {
	if e.spec.Replicas <= 1 {
		return
	}
	first := e.Resolve(e.ReplicaAddr(1))
	e.mu.Lock()
	e.addrs[e.ToolAddr()] = first
	e.mu.Unlock()
}

// Crash kills the tool's container (its first replica) with SIGKILL: no
// graceful shutdown, what it had not written is gone.
func (e *Env) Crash(ctx context.Context) error { return e.CrashReplica(ctx, 1) }

// CrashReplica kills replica i (from 1) with SIGKILL; Restart starts it
// again.
func (e *Env) CrashReplica(ctx context.Context, i int) error {
	if i < 1 || i > len(e.tools) {
		return fmt.Errorf("kill replica %d of %s: it runs as %d", i, e.spec.Tool.Name, len(e.tools))
	}
	name := ReplicaAlias(e.spec.Tool.Name, i, e.spec.Replicas)
	if _, err := e.docker.ContainerKill(ctx, e.tools[i-1].GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill %s: %w", name, err)
	}
	e.mu.Lock()
	if e.down == nil {
		e.down = map[int]bool{}
	}
	e.down[i] = true
	e.mu.Unlock()
	return nil
}

// Restart starts every crashed replica of the tool again and waits until
// its port answers (and its HTTP wait path, if any, returns 2xx). Mapped
// ports may move: Resolve reflects the new ones.
func (e *Env) Restart(ctx context.Context) error {
	e.mu.Lock()
	down := slices.Sorted(maps.Keys(e.down))
	e.mu.Unlock()
	for _, i := range down {
		if err := e.restart(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// restart starts replica i again and waits until it is ready: its HTTP
// wait path answers 2xx, or its wait log line appears again as often as at
// its first start, or else its port accepts connections.
func (e *Env) restart(ctx context.Context, i int) error {
	name := ReplicaAlias(e.spec.Tool.Name, i, e.spec.Replicas)
	c := e.tools[i-1]
	w := e.spec.Tool.Wait
	logged := 0
	if w.Log != "" && w.HTTP == "" {
		n, err := logCount(ctx, c, w.Log)
		if err != nil {
			return fmt.Errorf("restart %s: %w", name, err)
		}
		logged = n
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	if err := e.mapPort(ctx, c, name, e.spec.Tool.Port); err != nil {
		return err
	}
	if i == 1 {
		e.aliasFirst()
	}
	e.mu.Lock()
	e.restarts++
	delete(e.down, i)
	e.mu.Unlock()
	addr := e.Resolve(e.ReplicaAddr(i))
	deadline := time.Now().Add(e.spec.Startup)
	for {
		err := probe(ctx, addr, w.HTTP)
		if err == nil && logged > 0 {
			var n int
			if n, err = logCount(ctx, c, w.Log); err == nil && n < logged+max(w.Occurrence, 1) {
				err = fmt.Errorf("%q seen %d times, want %d", w.Log, n, logged+max(w.Occurrence, 1))
			}
		}
		if err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("restart %s: not ready after %s: %w", name, e.spec.Startup, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// logCount counts the occurrences of line in c's log, both streams, every
// start included.
func logCount(ctx context.Context, c *testcontainers.DockerContainer, line string) (int, error) {
	r, err := c.Logs(ctx)
	if err != nil {
		return 0, fmt.Errorf("logs: %w", err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("logs: %w", err)
	}
	return bytes.Count(data, []byte(line)), nil
}
