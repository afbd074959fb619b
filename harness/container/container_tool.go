package container

import (
	"context"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// ContainerTool is an HTTP tool running in a container environment: its URL
// and its oracle's addresses name container aliases, which the environment
// resolves to mapped ports.
type ContainerTool struct {
	*harness.HTTPTool
	env *Env
}

// NewContainerTool builds the tool described by c inside env. c's URL must
// point at the environment's tool container (alias:port).
func NewContainerTool(env *Env, c harness.HTTPConfig) (*ContainerTool, error) {
	c.Oracle = harness.WithResolver(c.Oracle, env.Resolve)
	c.Downstream = env.Downstream()
	// The URL names the tool's own container (its alias), which Upstream
	// maps to where it is reached.
	c.Guard = c.Guard.Trusting(env.ToolAddr())
	t, err := harness.NewHTTPTool(c)
	if err != nil {
		return nil, err
	}
	return &ContainerTool{HTTPTool: t, env: env}, nil
}

// Env returns the tool's container environment.
func (t *ContainerTool) Env() *Env { return t.env }

// Upstream implements Tool: the tool's mapped port for the embedded
// Toxiproxy, its alias for the Toxiproxy container on its network (of its
// first replica when it runs as several).
func (t *ContainerTool) Upstream() string { return t.ReplicaUpstream(1) }

// Replicas implements Replicated.
func (t *ContainerTool) Replicas() int { return t.env.Replicas() }

// ReplicaUpstream implements Replicated.
func (t *ContainerTool) ReplicaUpstream(i int) string {
	if t.env.Mode() == ToxiproxyContainer {
		return t.env.ReplicaAddr(i)
	}
	return t.env.Resolve(t.env.ReplicaAddr(i))
}

// CrashReplica implements ReplicaCrasher.
func (t *ContainerTool) CrashReplica(ctx context.Context, i int) error {
	return t.env.CrashReplica(ctx, i)
}

// Backend implements BackendProvider (nil in embedded mode).
func (t *ContainerTool) Backend() faults.Backend { return t.env.Backend() }

// MaxProxies is how many fault proxies the tool's environment serves at
// once (0: no limit).
func (t *ContainerTool) MaxProxies() int { return t.env.Inbound() }

// Links implements Linked.
func (t *ContainerTool) Links() map[string]faults.Proxy { return t.env.Links() }

// Crash implements Crasher.
func (t *ContainerTool) Crash(ctx context.Context) error { return t.env.Crash(ctx) }

// Restart implements Crasher.
func (t *ContainerTool) Restart(ctx context.Context) error { return t.env.Restart(ctx) }

// Close removes the tool's environment.
func (t *ContainerTool) Close(ctx context.Context) error { return t.env.Close(ctx) }
