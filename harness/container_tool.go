package harness

import (
	"context"

	"github.com/onceproof/onceproof/faults"
)

// Crasher is a tool whose process the harness can kill and restart (a
// container). Restart returns once the tool accepts connections again.
type Crasher interface {
	Crash(ctx context.Context) error
	Restart(ctx context.Context) error
}

// Linked is a tool whose links to its dependencies run through fault
// proxies, by dependency name.
type Linked interface {
	Links() map[string]faults.Proxy
}

// BackendProvider is a tool that brings its own fault backend (the
// Toxiproxy container of its environment).
type BackendProvider interface {
	Backend() faults.Backend
}

// ContainerTool is an HTTP tool running in a container environment: its URL
// and its oracle's addresses name container aliases, which the environment
// resolves to mapped ports.
type ContainerTool struct {
	*HTTPTool
	env *Env
}

// NewContainerTool builds the tool described by c inside env. c's URL must
// point at the environment's tool container (alias:port).
func NewContainerTool(env *Env, c HTTPConfig) (*ContainerTool, error) {
	c.Oracle = WithResolver(c.Oracle, env.Resolve)
	// The URL names the tool's own container (its alias), which Upstream
	// maps to where it is reached.
	c.Guard = c.Guard.trusting(env.ToolAddr())
	t, err := NewHTTPTool(c)
	if err != nil {
		return nil, err
	}
	return &ContainerTool{HTTPTool: t, env: env}, nil
}

// Env returns the tool's container environment.
func (t *ContainerTool) Env() *Env { return t.env }

// Upstream implements Tool: the tool's mapped port for the embedded
// Toxiproxy, its alias for the Toxiproxy container on its network.
func (t *ContainerTool) Upstream() string {
	if t.env.Mode() == ToxiproxyContainer {
		return t.env.ToolAddr()
	}
	return t.env.Resolve(t.env.ToolAddr())
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
