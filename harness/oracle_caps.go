package harness

import (
	"io"
	"net/url"
)

// The optional capabilities of an oracle. Package harness asks an oracle
// for them instead of switching on its type, so a new kind of oracle (in
// another package, a SQL or Redis one, a user's) joins by implementing
// what applies to it.

// Resolvable is an oracle whose addresses may name a container alias:
// WithResolver returns a copy that maps them through resolve at every
// query (a restarted container's port moves).
type Resolvable interface {
	WithResolver(resolve func(hostport string) string) Oracle
}

// Guardable is an oracle that makes connections of its own: WithGuard
// returns a copy whose connections g checks (see [Guard]).
type Guardable interface {
	WithGuard(g *Guard) Oracle
}

// Target is a network address an oracle reaches, and the spec field that
// names it ("oracle.http.url", "oracle.sql.dsn").
type Target struct {
	Field string
	URL   string
}

// Targeted is an oracle that reaches network addresses (checked before a
// run against the loopback guard).
type Targeted interface {
	Targets() []Target
}

// CountURLer is an oracle that counts by asking a URL (an HTTP oracle), so
// a reproducer can ask it too.
type CountURLer interface {
	CountURL(marker string) string
}

// WithResolver returns o mapping its addresses through resolve, when it can
// ([Resolvable]); o itself otherwise.
func WithResolver(o Oracle, resolve func(string) string) Oracle {
	if r, ok := o.(Resolvable); ok {
		return r.WithResolver(resolve)
	}
	return o
}

// GuardOracle returns o with every connection it makes checked by g, when
// it makes any ([Guardable]); o itself otherwise.
func GuardOracle(o Oracle, g *Guard) Oracle {
	if x, ok := o.(Guardable); ok {
		return x.WithGuard(g)
	}
	return o
}

// OracleTargets are the addresses o reaches ([Targeted]; none otherwise).
func OracleTargets(o Oracle) []Target {
	if t, ok := o.(Targeted); ok {
		return t.Targets()
	}
	return nil
}

// CountURL is the URL o asks for marker's count ("" when o is not a
// [CountURLer]), so a reproducer can show the effects too.
func CountURL(o Oracle, marker string) string {
	if c, ok := o.(CountURLer); ok {
		return c.CountURL(marker)
	}
	return ""
}

// CloseOracle releases an oracle's connections, if it holds any ([io.Closer]).
func CloseOracle(o Oracle) {
	if c, ok := o.(io.Closer); ok {
		_ = c.Close()
	}
}

// The capabilities of a settled oracle are those of the oracle it wraps.

func (s *settled) WithResolver(resolve func(string) string) Oracle {
	return &settled{o: WithResolver(s.o, resolve), settle: s.settle}
}

func (s *settled) WithGuard(g *Guard) Oracle {
	return &settled{o: GuardOracle(s.o, g), settle: s.settle}
}

func (s *settled) Targets() []Target { return OracleTargets(s.o) }

func (s *settled) CountURL(marker string) string { return CountURL(s.o, marker) }

func (s *settled) Close() error {
	CloseOracle(s.o)
	return nil
}

// The capabilities of an HTTP oracle.

// WithResolver implements Resolvable.
func (o *HTTPOracle) WithResolver(resolve func(string) string) Oracle {
	c := *o
	c.Resolve = resolve
	return &c
}

// WithGuard implements Guardable.
func (o *HTTPOracle) WithGuard(g *Guard) Oracle {
	c := *o
	c.Guard = g
	return &c
}

// Targets implements Targeted: the URL rendered with a dummy marker.
func (o *HTTPOracle) Targets() []Target {
	raw, err := o.URL.Render(Operation{Marker: "onceproof-target-check"})
	if err != nil {
		raw = o.URL.String()
	}
	return []Target{{Field: "oracle.http.url", URL: raw}}
}

// CountURL implements CountURLer: the URL asked for marker, container
// aliases resolved.
func (o *HTTPOracle) CountURL(marker string) string {
	u, err := o.URL.Render(Operation{Marker: marker})
	if err != nil {
		return ""
	}
	if out, _, err := ResolveURL(u, o.Resolve); err == nil {
		return out
	}
	return u
}

// ResolveURL maps raw's host:port through resolve (nil: unchanged); mapped
// is the address it mapped to ("" when it did not change).
func ResolveURL(raw string, resolve func(string) string) (out, mapped string, err error) {
	if resolve == nil {
		return raw, "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	hp := HostPort(u)
	r := resolve(hp)
	if r == hp {
		return raw, "", nil
	}
	u.Host = r
	return u.String(), r, nil
}

// Unwrap returns the oracle s waits on.
func (s *settled) Unwrap() Oracle { return s.o }

// UnwrapOracle returns the oracle o wraps, through every wrapper that says
// what it wraps (an Unwrap() Oracle method, as [Settled]'s has).
func UnwrapOracle(o Oracle) Oracle {
	for {
		w, ok := o.(interface{ Unwrap() Oracle })
		if !ok {
			return o
		}
		o = w.Unwrap()
	}
}
