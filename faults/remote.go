package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// Remote drives a toxiproxy-server through its HTTP API. Proxies listen on the
// server's host; callers dial that host.
type Remote struct {
	url    string
	host   string
	client *toxiclient.Client

	mu      sync.Mutex
	proxies map[string]*remoteProxy
	closed  bool
}

// NewRemote connects to the toxiproxy-server API at rawURL
// (e.g. "http://127.0.0.1:8474") and checks that it answers.
func NewRemote(ctx context.Context, rawURL string) (*Remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("toxiproxy %q: want an http(s) URL such as http://127.0.0.1:8474", rawURL)
	}
	r := &Remote{
		url:     strings.TrimRight(rawURL, "/"),
		host:    u.Hostname(),
		client:  toxiclient.NewClient(strings.TrimRight(rawURL, "/")),
		proxies: make(map[string]*remoteProxy),
	}
	if _, err := r.client.Proxies(); err != nil {
		return nil, fmt.Errorf("toxiproxy %s: %w", rawURL, err)
	}
	return r, nil
}

// String implements Backend.
func (r *Remote) String() string { return "remote " + r.url }

// NewProxy implements Backend: the proxy listens on an ephemeral port of the
// server's host. A proxy left over from an earlier run with the same name is
// replaced.
func (r *Remote) NewProxy(ctx context.Context, name, upstream string) (Proxy, error) {
	listen := "0.0.0.0:0"
	if ip := net.ParseIP(r.host); (ip != nil && ip.IsLoopback()) || r.host == "localhost" {
		listen = "127.0.0.1:0"
	}
	return r.NewProxyAt(ctx, name, listen, upstream, nil)
}

// NewProxyAt creates a proxy listening on listen (an address inside the
// server's own network, e.g. "0.0.0.0:20000" in a container). dial maps the
// address the server reports to the one callers dial (a container's mapped
// port); nil dials the server's host at the reported port.
func (r *Remote) NewProxyAt(ctx context.Context, name, listen, upstream string, dial func(listen string) (string, error)) (Proxy, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if err := r.deleteLeftover(name); err != nil {
		return nil, err
	}
	p, err := r.client.CreateProxy(name, listen, upstream)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy %s: create proxy %q: %w", r.url, name, err)
	}
	if dial == nil {
		dial = func(listen string) (string, error) {
			_, port, err := net.SplitHostPort(listen)
			return net.JoinHostPort(r.host, port), err
		}
	}
	addr, err := dial(p.Listen)
	if err != nil {
		_ = p.Delete()
		return nil, fmt.Errorf("toxiproxy %s: proxy %q listens on %q: %w", r.url, name, p.Listen, err)
	}
	rp := &remoteProxy{backend: r, p: p, addr: addr}
	r.proxies[name] = rp
	return rp, nil
}

// deleteLeftover deletes a proxy named name that an earlier run left on the
// server. The server's 404 (a typed *toxiclient.ApiError) means there is none;
// any other failure is returned rather than hidden behind a later "already
// exists".
func (r *Remote) deleteLeftover(name string) error {
	old, err := r.client.Proxy(name)
	var apiErr *toxiclient.ApiError
	switch {
	case err == nil:
		if err := old.Delete(); err != nil {
			return fmt.Errorf("toxiproxy %s: delete leftover proxy %q: %w", r.url, name, err)
		}
		return nil
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound:
		return nil
	default:
		return fmt.Errorf("toxiproxy %s: look up proxy %q: %w", r.url, name, err)
	}
}

// Close implements Backend: it deletes every proxy this Remote created.
func (r *Remote) Close(ctx context.Context) error {
	r.mu.Lock()
	ps := r.proxies
	r.proxies = map[string]*remoteProxy{}
	r.closed = true
	r.mu.Unlock()
	var first error
	for _, p := range ps {
		if err := p.p.Delete(); err != nil && first == nil {
			first = fmt.Errorf("toxiproxy %s: delete proxy %q: %w", r.url, p.Name(), err)
		}
	}
	return first
}

type remoteProxy struct {
	backend *Remote
	p       *toxiclient.Proxy
	addr    string
}

func (p *remoteProxy) Name() string     { return p.p.Name }
func (p *remoteProxy) Addr() string     { return p.addr }
func (p *remoteProxy) Upstream() string { return p.p.Upstream }

func (p *remoteProxy) AddToxic(ctx context.Context, t Toxic) error {
	if _, err := p.p.AddToxic(t.Name, t.Type, string(t.Stream), 1, toxiclient.Attributes(t.Attributes)); err != nil {
		return fmt.Errorf("proxy %s: add toxic %s: %w", p.Name(), t.Name, err)
	}
	return nil
}

func (p *remoteProxy) RemoveToxic(ctx context.Context, name string) error {
	if err := p.p.RemoveToxic(name); err != nil {
		return fmt.Errorf("proxy %s: remove toxic %s: %w", p.Name(), name, err)
	}
	return nil
}

func (p *remoteProxy) SetUpstream(ctx context.Context, upstream string) error {
	p.p.Upstream = upstream
	if err := p.p.Save(); err != nil {
		return fmt.Errorf("proxy %s: set upstream %s: %w", p.Name(), upstream, err)
	}
	return nil
}

func (p *remoteProxy) SetEnabled(ctx context.Context, enabled bool) error {
	var err error
	if enabled {
		err = p.p.Enable()
	} else {
		err = p.p.Disable()
	}
	if err != nil {
		return fmt.Errorf("proxy %s: set enabled=%v: %w", p.Name(), enabled, err)
	}
	return nil
}

func (p *remoteProxy) Close(ctx context.Context) error {
	p.backend.mu.Lock()
	delete(p.backend.proxies, p.Name())
	p.backend.mu.Unlock()
	if err := p.p.Delete(); err != nil {
		return fmt.Errorf("proxy %s: delete: %w", p.Name(), err)
	}
	return nil
}
