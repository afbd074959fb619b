package container

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// ErrNoDocker marks a container spec that cannot run because no Docker
// engine is reachable.
var ErrNoDocker = errors.New("no Docker engine reachable")

// Labels every container and network onceproof starts carries: LabelRun names
// the run, LabelPID the process that owns it (so Sweep can remove what a
// killed run left behind).
const (
	LabelOwner = "org.onceproof"
	LabelRun   = "org.onceproof.run"
	LabelPID   = "org.onceproof.pid"
	LabelHost  = "org.onceproof.host"
)

// ToxiproxyMode says where a container tool's fault proxy runs.
type ToxiproxyMode string

const (
	// ToxiproxyEmbedded runs Toxiproxy in this process, between the harness
	// and the tool's mapped port.
	ToxiproxyEmbedded ToxiproxyMode = "embedded"
	// ToxiproxyContainer runs toxiproxy-server as a container on the tool's
	// network, which also puts proxies on the tool's links to its
	// dependencies.
	ToxiproxyContainer ToxiproxyMode = "container"
)

// ToxiproxyImage is the image the container mode runs (substituted like any
// other image).
const ToxiproxyImage = "ghcr.io/shopify/toxiproxy:2.5.0"

// inboundPort is where the container Toxiproxy listens for the harness.
const inboundPort = 20000

// toxiproxyAPIPort is where the container Toxiproxy serves its API.
const toxiproxyAPIPort = 8474

// ContainerSpec is a tool that runs as a container, with its dependencies, on
// a private network.
type ContainerSpec struct {
	// Tool is the tool's own container; its Name is its network alias.
	Tool Service
	// Dependencies start first, in order (a database, a cache, ...).
	Dependencies []Service
	// Toxiproxy is where the fault proxy runs (default embedded).
	Toxiproxy ToxiproxyMode
	// Startup bounds how long each container may take to become ready
	// (default 60s).
	Startup time.Duration
	// Replicas is how many copies of the tool container run (default 1, at
	// most MaxReplicas), sharing the dependencies; see [ReplicaAlias].
	Replicas int
	// Downstream, when set, is the HTTP dependency onceproof plays for the
	// tool: the environment starts it where the tool containers reach it
	// and hands them its URL.
	Downstream *harness.DownstreamSpec
}

// Service is one container.
type Service struct {
	// Name is the container's alias on the network.
	Name  string
	Image string
	Env   map[string]string
	Cmd   []string
	// Port is the TCP port the service listens on inside the network.
	Port int
	// Wait is how to tell the service is ready (default: its port accepts
	// connections).
	Wait Wait
	// Proxied routes the tool's link to this dependency through the
	// container Toxiproxy, so faults can hit it.
	Proxied bool
}

// Wait is a readiness check: an HTTP GET path answering 2xx, or a log line
// seen Occurrence times (default 1).
type Wait struct {
	HTTP       string
	Log        string
	Occurrence int
}

// EnvOptions tune StartEnv.
type EnvOptions struct {
	// Images substitutes image names (e.g. LocalImages in tests); nil uses
	// the names as written, pulling what is missing like any Docker user.
	Images testcontainers.ImageSubstitutor
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Inbound is how many overlapping trials the Toxiproxy container
	// serves at once, each with one inbound proxy per replica (default
	// DefaultInbound; with replicas, at most maxInboundPorts proxies in
	// all). The embedded Toxiproxy has no such limit.
	Inbound int
}

// DefaultInbound is how many inbound proxies a Toxiproxy container serves
// by default.
const DefaultInbound = 8

// Env is a started container environment: a network, the tool, its
// dependencies and, in container mode, a Toxiproxy. Close removes all of it.
type Env struct {
	spec   ContainerSpec
	opts   EnvOptions
	run    string
	docker *testcontainers.DockerClient
	net    *testcontainers.DockerNetwork
	host   PublishedHost // where published ports are reached

	mu       sync.Mutex
	all      []*testcontainers.DockerContainer
	tool     *testcontainers.DockerContainer // the first replica
	deps     map[string]*testcontainers.DockerContainer
	toxi     *testcontainers.DockerContainer
	remote   *faults.Remote
	links    map[string]faults.Proxy
	addrs    map[string]string // "alias:port" → "host:mapped"
	inbound  chan int          // free inbound proxy ports of the Toxiproxy container
	closed   bool
	startup  time.Duration
	restarts int

	tools []*testcontainers.DockerContainer // every replica, in order
	down  map[int]bool                      // replicas killed and not restarted yet (from 1)
	// downstream is the endpoint playing the tool's HTTP dependency.
	downstream *harness.Downstream
}

// StartEnv starts spec's containers and waits until each is ready. On error
// everything already started is removed.
func StartEnv(ctx context.Context, spec ContainerSpec, opts EnvOptions) (env *Env, err error) {
	began := time.Now()
	if spec.Toxiproxy == "" {
		spec.Toxiproxy = ToxiproxyEmbedded
	}
	if spec.Startup <= 0 {
		spec.Startup = 60 * time.Second
	}
	spec.Replicas = min(max(spec.Replicas, 1), harness.MaxReplicas)
	if opts.Inbound <= 0 {
		opts.Inbound = DefaultInbound
	}
	docker, err := DockerClient(ctx)
	if err != nil {
		return nil, err
	}
	host, err := DetectPublishedHost(ctx, docker)
	if err != nil {
		_ = docker.Close()
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	e := &Env{spec: spec, opts: opts, run: hex.EncodeToString(b[:]), docker: docker, host: host,
		deps: map[string]*testcontainers.DockerContainer{}, links: map[string]faults.Proxy{}, addrs: map[string]string{}}
	defer func() {
		if err != nil {
			_ = e.Close(context.WithoutCancel(ctx))
			env = nil
		}
	}()
	// Remove what killed runs of onceproof left behind before adding more.
	if n, err := Sweep(ctx, docker); err != nil {
		e.logf("sweep: %v", err)
	} else if n > 0 {
		e.logf("removed %d containers and networks that killed runs left behind", n)
	}
	if host.Reason != localEngine {
		e.logf("containers' ports are reached at %s (%s)", host.Addr, host.Reason)
	}
	if e.net, err = network.New(ctx, network.WithLabels(e.labels())); err != nil {
		return nil, fmt.Errorf("container network: %w", err)
	}
	if err := e.startDownstream(ctx); err != nil {
		return nil, err
	}
	for _, d := range spec.Dependencies {
		aliases := []string{d.Name}
		if d.Proxied && spec.Toxiproxy == ToxiproxyContainer {
			aliases = []string{upstreamAlias(d.Name)} // the proxy takes the name
		}
		c, err := e.start(ctx, d, aliases)
		if err != nil {
			return nil, err
		}
		e.deps[d.Name] = c
	}
	if spec.Toxiproxy == ToxiproxyContainer {
		if err := e.startToxiproxy(ctx); err != nil {
			return nil, err
		}
	}
	if err := e.startTools(ctx); err != nil {
		return nil, err
	}
	e.startup = time.Since(began)
	e.logf("environment %s ready in %s", e.run, e.startup.Round(time.Millisecond))
	return e, nil
}

func upstreamAlias(name string) string { return name + "-onceproof-upstream" }

func (e *Env) labels() map[string]string {
	host, _ := os.Hostname()
	return map[string]string{LabelOwner: "true", LabelRun: e.run, LabelPID: strconv.Itoa(os.Getpid()), LabelHost: host}
}

func (e *Env) logf(format string, args ...any) {
	if e.opts.Log != nil {
		fmt.Fprintf(e.opts.Log, format+"\n", args...)
	}
}

// start runs one service and records its mapped port.
func (e *Env) start(ctx context.Context, s Service, aliases []string) (*testcontainers.DockerContainer, error) {
	port := fmt.Sprintf("%d/tcp", s.Port)
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithLabels(e.labels()),
		testcontainers.WithExposedPorts(port),
		testcontainers.WithLogger(tclog.NewNoopLogger()),
		network.WithNetwork(aliases, e.net),
		testcontainers.WithWaitStrategyAndDeadline(e.spec.Startup, onHost(s.wait(port), e.host.Addr)),
	}
	if len(s.Env) > 0 {
		opts = append(opts, testcontainers.WithEnv(s.Env))
	}
	if len(s.Cmd) > 0 {
		opts = append(opts, testcontainers.WithCmd(s.Cmd...))
	}
	if e.opts.Images != nil {
		opts = append(opts, testcontainers.WithImageSubstitutors(e.opts.Images))
	}
	e.logf("starting %s (%s)", s.Name, s.Image)
	c, err := testcontainers.Run(ctx, s.Image, opts...)
	if c != nil {
		e.mu.Lock()
		e.all = append(e.all, c)
		e.mu.Unlock()
	}
	if err != nil {
		return nil, fmt.Errorf("container %s (%s): %w", s.Name, s.Image, err)
	}
	if err := e.mapPort(ctx, c, s.Name, s.Port); err != nil {
		return nil, err
	}
	return c, nil
}

func (s Service) wait(port string) wait.Strategy {
	switch {
	case s.Wait.HTTP != "":
		return wait.ForHTTP(s.Wait.HTTP).WithPort(port)
	case s.Wait.Log != "":
		return wait.ForLog(s.Wait.Log).WithOccurrence(max(1, s.Wait.Occurrence))
	}
	return wait.ForListeningPort(port)
}

// mapPort records where alias:port is reachable from this host.
func (e *Env) mapPort(ctx context.Context, c *testcontainers.DockerContainer, alias string, port int) error {
	host := e.host.Addr
	mapped, err := c.MappedPort(ctx, fmt.Sprintf("%d/tcp", port))
	if err != nil {
		return fmt.Errorf("container %s: port %d: %w", alias, port, err)
	}
	e.mu.Lock()
	e.addrs[net.JoinHostPort(alias, strconv.Itoa(port))] = net.JoinHostPort(host, strconv.Itoa(int(mapped.Num())))
	e.mu.Unlock()
	return nil
}

// startToxiproxy starts toxiproxy-server on the network. It answers to the
// names of proxied dependencies, and forwards each to the real container.
func (e *Env) startToxiproxy(ctx context.Context) error {
	aliases := []string{"onceproof-toxiproxy"}
	for _, d := range e.spec.Dependencies {
		if d.Proxied {
			aliases = append(aliases, d.Name)
		}
	}
	ports := []string{"8474/tcp"}
	for i := range e.inboundPorts() {
		ports = append(ports, fmt.Sprintf("%d/tcp", inboundPort+i))
	}
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithLabels(e.labels()),
		testcontainers.WithExposedPorts(ports...),
		testcontainers.WithLogger(tclog.NewNoopLogger()),
		network.WithNetwork(aliases, e.net),
		testcontainers.WithWaitStrategyAndDeadline(e.spec.Startup, onHost(wait.ForHTTP("/version").WithPort("8474/tcp"), e.host.Addr)),
	}
	if e.opts.Images != nil {
		opts = append(opts, testcontainers.WithImageSubstitutors(e.opts.Images))
	}
	e.logf("starting toxiproxy (%s)", ToxiproxyImage)
	c, err := testcontainers.Run(ctx, ToxiproxyImage, opts...)
	if c != nil {
		e.mu.Lock()
		e.all = append(e.all, c)
		e.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("container toxiproxy (%s): %w", ToxiproxyImage, err)
	}
	e.toxi = c
	if err := e.mapPort(ctx, c, "onceproof-toxiproxy", 8474); err != nil {
		return err
	}
	e.inbound = make(chan int, e.inboundPorts())
	for i := range e.inboundPorts() {
		if err := e.mapPort(ctx, c, "onceproof-toxiproxy", inboundPort+i); err != nil {
			return err
		}
		e.inbound <- inboundPort + i
	}
	api := e.Resolve(net.JoinHostPort("onceproof-toxiproxy", "8474"))
	if e.remote, err = faults.NewRemote(ctx, "http://"+api); err != nil {
		return err
	}
	for _, d := range e.spec.Dependencies {
		if !d.Proxied {
			continue
		}
		listen := net.JoinHostPort("0.0.0.0", strconv.Itoa(d.Port))
		upstream := net.JoinHostPort(upstreamAlias(d.Name), strconv.Itoa(d.Port))
		p, err := e.remote.NewProxyAt(ctx, "link-"+d.Name, listen, upstream, func(string) (string, error) {
			return "", nil // only the tool dials it, from inside the network
		})
		if err != nil {
			return err
		}
		e.links[d.Name] = p
	}
	return nil
}

// ToolImage names the image the tool container runs (after substitution)
// and its ID, the digest of the build that was certified.
func (e *Env) ToolImage(ctx context.Context) (image, digest string, err error) {
	info, err := e.tool.Inspect(ctx)
	if err != nil {
		return "", "", fmt.Errorf("inspect %s: %w", e.spec.Tool.Name, err)
	}
	return e.spec.Tool.Image, info.Image, nil
}

// Startup is how long StartEnv took.
func (e *Env) Startup() time.Duration { return e.startup }

// Mode is where the fault proxy runs.
func (e *Env) Mode() ToxiproxyMode { return e.spec.Toxiproxy }

// Resolve maps "alias:port" of a container in the environment to the address
// this host reaches it at; other addresses come back unchanged.
func (e *Env) Resolve(hostport string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, ok := e.addrs[hostport]; ok {
		return a
	}
	return hostport
}

// ToolAddr is "alias:port" of the tool inside the network.
func (e *Env) ToolAddr() string {
	return net.JoinHostPort(e.spec.Tool.Name, strconv.Itoa(e.spec.Tool.Port))
}

// Links are the proxies on the tool's links to its proxied dependencies, by
// dependency name (empty in embedded mode).
func (e *Env) Links() map[string]faults.Proxy {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]faults.Proxy, len(e.links))
	for k, v := range e.links {
		out[k] = v
	}
	return out
}

// Backend is the fault backend for the tool's inbound proxy: nil in embedded
// mode (the caller's embedded Toxiproxy fronts the tool's mapped port), the
// container Toxiproxy otherwise.
func (e *Env) Backend() faults.Backend {
	if e.remote == nil {
		return nil
	}
	return &containerBackend{e: e}
}

// containerBackend creates the inbound proxy inside the Toxiproxy container.
type containerBackend struct{ e *Env }

func (b *containerBackend) String() string { return "container " + b.e.remote.String() }

func (b *containerBackend) NewProxy(ctx context.Context, name, upstream string) (faults.Proxy, error) {
	var port int
	select {
	case port = <-b.e.inbound:
	default:
		return nil, fmt.Errorf("toxiproxy container: all %d inbound proxies are in use", cap(b.e.inbound))
	}
	listen := net.JoinHostPort("0.0.0.0", strconv.Itoa(port))
	p, err := b.e.remote.NewProxyAt(ctx, name, listen, upstream, func(string) (string, error) {
		return b.e.Resolve(net.JoinHostPort("onceproof-toxiproxy", strconv.Itoa(port))), nil
	})
	if err != nil {
		b.e.inbound <- port
		return nil, err
	}
	return &inboundProxy{Proxy: p, free: func() { b.e.inbound <- port }}, nil
}

// inboundProxy returns its port to the free list when closed.
type inboundProxy struct {
	faults.Proxy
	once sync.Once
	free func()
}

func (p *inboundProxy) Close(ctx context.Context) error {
	err := p.Proxy.Close(ctx)
	p.once.Do(p.free)
	return err
}

// Inbound is how many overlapping trials the environment serves at once,
// each with one inbound proxy per replica (0: no limit, the embedded
// Toxiproxy).
func (e *Env) Inbound() int {
	if e.inbound == nil {
		return 0
	}
	return max(cap(e.inbound)/e.spec.Replicas, 1)
}

// Close leaves the environment to Env.Close.
func (b *containerBackend) Close(ctx context.Context) error { return nil }

// probe checks that addr accepts connections and, given a path, answers 2xx.
func probe(ctx context.Context, addr, path string) error {
	if path == "" {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	return nil
}

// Close removes every container and the network, whatever state they are in.
func (e *Env) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	all := e.all
	e.mu.Unlock()
	var errs []error
	if e.remote != nil {
		_ = e.remote.Close(ctx)
	}
	if e.downstream != nil {
		errs = append(errs, e.downstream.Close())
	}
	for i := len(all) - 1; i >= 0; i-- {
		// The containers are disposable: killed, not stopped gracefully, so
		// that removing them takes no stop timeout.
		if err := all[i].Terminate(ctx, testcontainers.StopTimeout(0)); err != nil {
			errs = append(errs, err)
		}
	}
	if e.net != nil {
		if err := e.net.Remove(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if e.docker != nil {
		_ = e.docker.Close()
	}
	return errors.Join(errs...)
}

// DockerClient connects to the Docker engine, or returns an error wrapping
// ErrNoDocker.
func DockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		// onceproof removes its own containers (Close, Sweep); the reaper
		// would need an image pulled from a registry.
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// testcontainers falls back to the default socket when DOCKER_HOST does
	// not answer; a DOCKER_HOST that names no engine is a mistake to report,
	// not a reason to drive another engine.
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		if err := dialDockerHost(ctx, h); err != nil {
			return nil, fmt.Errorf("%w: DOCKER_HOST=%s: %w", ErrNoDocker, h, err)
		}
	}
	c, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Ping(pctx, client.PingOptions{}); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	return c, nil
}

// dialDockerHost checks that a DOCKER_HOST address accepts connections.
func dialDockerHost(ctx context.Context, h string) error {
	u, err := url.Parse(h)
	if err != nil {
		return err
	}
	network, addr := "tcp", u.Host
	switch u.Scheme {
	case "unix":
		network, addr = "unix", u.Path
	case "tcp", "http", "https":
	default:
		return nil // ssh:// and friends: leave them to the Docker client
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// Sweep removes the containers and networks of onceproof runs whose process
// is gone (a run killed before it could clean up) and returns how many it
// removed. Runs of live processes, and of other hosts, are left alone.
func Sweep(ctx context.Context, docker *testcontainers.DockerClient) (int, error) {
	host, _ := os.Hostname()
	f := client.Filters{}.Add("label", LabelOwner+"=true")
	cs, err := docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, c := range cs.Items {
		if !orphan(c.Labels, host) {
			continue
		}
		if _, err := docker.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	ns, err := docker.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return removed, errors.Join(append(errs, err)...)
	}
	for _, n := range ns.Items {
		if !orphan(n.Labels, host) {
			continue
		}
		if _, err := docker.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// orphan reports whether labels name a run on host whose process is gone.
func orphan(labels map[string]string, host string) bool {
	if labels[LabelHost] != host {
		return false
	}
	pid, err := strconv.Atoi(labels[LabelPID])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false
	}
	_, err = os.Stat("/proc/" + strconv.Itoa(pid))
	return errors.Is(err, os.ErrNotExist)
}

// repository is an image name without its tag or digest.
func repository(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	return image
}

// DefaultLocalImages maps the usual public names to the images `make images`
// builds.
func DefaultLocalImages() map[string]string {
	return map[string]string{
		"postgres":                   "onceproof/postgres:15",
		"docker.io/library/postgres": "onceproof/postgres:15",
		"redis":                      "onceproof/redis:7",
		"docker.io/library/redis":    "onceproof/redis:7",
		"ghcr.io/shopify/toxiproxy":  "onceproof/toxiproxy:dev",
		"shopify/toxiproxy":          "onceproof/toxiproxy:dev",
	}
}
