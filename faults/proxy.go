package faults

import (
	"context"
	"errors"
)

// Direction is the way data flows through a proxy.
type Direction string

const (
	// Upstream is the caller-to-tool direction (the request).
	Upstream Direction = "upstream"
	// Downstream is the tool-to-caller direction (the response).
	Downstream Direction = "downstream"
)

// Toxic is one Toxiproxy toxic: a named, typed distortion of one direction of
// every connection through a proxy.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     Direction      `json:"stream"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// Proxy is a TCP proxy in front of one tool. Toxics and the enabled state
// apply to every connection through it, so a caller serialises attempts that
// need different faults.
type Proxy interface {
	// Name is the proxy's name on its backend.
	Name() string
	// Addr is the host:port callers dial to reach the tool through the proxy.
	Addr() string
	// Upstream is the host:port the proxy forwards to.
	Upstream() string
	// AddToxic installs t; it affects connections opened after it returns
	// and data not yet forwarded on open ones.
	AddToxic(ctx context.Context, t Toxic) error
	// RemoveToxic removes the toxic named name, flushing data it held.
	RemoveToxic(ctx context.Context, name string) error
	// SetUpstream points the proxy at a new upstream (a restarted tool
	// whose port moved); the listening address stays.
	SetUpstream(ctx context.Context, upstream string) error
	// SetEnabled closes (false) or reopens (true) the proxy's listener; a
	// disabled proxy refuses connections.
	SetEnabled(ctx context.Context, enabled bool) error
	// Close deletes the proxy and closes its connections.
	Close(ctx context.Context) error
}

// Backend creates proxies: an embedded Toxiproxy or a remote toxiproxy-server.
type Backend interface {
	// NewProxy creates and starts a proxy named name that forwards to upstream.
	NewProxy(ctx context.Context, name, upstream string) (Proxy, error)
	// String describes the backend for reports ("embedded", "remote URL").
	String() string
	// Close releases the backend and every proxy it still holds.
	Close(ctx context.Context) error
}

// ErrClosed is returned when a proxy or backend is used after Close.
var ErrClosed = errors.New("faults: closed")
