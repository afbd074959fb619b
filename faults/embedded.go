package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Embedded is a Toxiproxy running inside this process. Its proxies listen on
// 127.0.0.1 with ephemeral ports.
type Embedded struct {
	server *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies map[string]*embeddedProxy
	closed  bool
}

// NewEmbedded starts an in-process Toxiproxy. It needs no network service of
// its own: proxies are driven through Go calls, not the HTTP API.
func NewEmbedded() *Embedded {
	// No metrics are exported: a nil registry gives the container a private
	// one that nothing registers collectors in.
	return &Embedded{
		server:  toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: make(map[string]*embeddedProxy),
	}
}

// String implements Backend.
func (e *Embedded) String() string { return "embedded" }

// NewProxy implements Backend.
func (e *Embedded) NewProxy(ctx context.Context, name, upstream string) (Proxy, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if _, dup := e.proxies[name]; dup {
		return nil, fmt.Errorf("embedded toxiproxy: proxy %q already exists", name)
	}
	p := toxiproxy.NewProxy(e.server, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("embedded toxiproxy: start proxy %q: %w", name, err)
	}
	ep := &embeddedProxy{backend: e, p: p, addr: p.Listen}
	e.proxies[name] = ep
	return ep, nil
}

// Close implements Backend: it stops every proxy.
func (e *Embedded) Close(ctx context.Context) error {
	e.mu.Lock()
	ps := e.proxies
	e.proxies = map[string]*embeddedProxy{}
	e.closed = true
	e.mu.Unlock()
	for _, p := range ps {
		p.stop(ctx)
	}
	return nil
}

type embeddedProxy struct {
	backend *Embedded
	p       *toxiproxy.Proxy
	addr    string

	mu     sync.Mutex
	closed bool
}

func (p *embeddedProxy) Name() string     { return p.p.Name }
func (p *embeddedProxy) Addr() string     { return p.addr }
func (p *embeddedProxy) Upstream() string { return p.p.Upstream }

func (p *embeddedProxy) check() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	return nil
}

func (p *embeddedProxy) AddToxic(ctx context.Context, t Toxic) error {
	if err := p.check(); err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{
		"name": t.Name, "type": t.Type, "stream": string(t.Stream),
		"toxicity": 1.0, "attributes": t.Attributes,
	})
	if err != nil {
		return fmt.Errorf("toxic %s: %w", t.Name, err)
	}
	if _, err := p.p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("proxy %s: add toxic %s: %w", p.Name(), t.Name, err)
	}
	return nil
}

func (p *embeddedProxy) RemoveToxic(ctx context.Context, name string) error {
	if err := p.check(); err != nil {
		return err
	}
	if err := p.p.Toxics.RemoveToxic(ctx, name); err != nil {
		return fmt.Errorf("proxy %s: remove toxic %s: %w", p.Name(), name, err)
	}
	return nil
}

func (p *embeddedProxy) SetUpstream(ctx context.Context, upstream string) error {
	if err := p.check(); err != nil {
		return err
	}
	if err := p.p.Update(&toxiproxy.Proxy{Name: p.p.Name, Listen: p.addr, Upstream: upstream, Enabled: true}); err != nil {
		return fmt.Errorf("proxy %s: set upstream %s: %w", p.Name(), upstream, err)
	}
	return nil
}

func (p *embeddedProxy) SetEnabled(ctx context.Context, enabled bool) error {
	if err := p.check(); err != nil {
		return err
	}
	if !enabled {
		p.p.Stop()
		return nil
	}
	if err := p.p.Start(); err != nil && err != toxiproxy.ErrProxyAlreadyStarted {
		return fmt.Errorf("proxy %s: enable: %w", p.Name(), err)
	}
	return nil
}

func (p *embeddedProxy) Close(ctx context.Context) error {
	p.backend.mu.Lock()
	delete(p.backend.proxies, p.Name())
	p.backend.mu.Unlock()
	p.stop(ctx)
	return nil
}

func (p *embeddedProxy) stop(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.p.Toxics.ResetToxics(ctx)
	p.p.Stop()
}
