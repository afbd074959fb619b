package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrRemoteTarget marks a tool, oracle or proxy address that is not
// loopback.
var ErrRemoteTarget = errors.New("remote target")

// remoteHint ends every refusal: why, and what to do about it.
const remoteHint = "onceproof duplicates writes on purpose, so it only targets loopback unless remote targets are explicitly allowed"

// SystemHostsFile is the hosts table a Guard reads when its Hosts is nil.
const SystemHostsFile = "/etc/hosts"

// Guard is the loopback guard every outbound connection of a run goes
// through: the tool's address (given to the fault proxy), the HTTP oracle and
// every redirect it follows, the SQL and Redis oracles, a remote Toxiproxy,
// an MCP server.
//
// Literal addresses are checked without any lookup: 127.0.0.0/8 and ::1 pass,
// anything else is refused. Names are never sent to DNS: "localhost" and
// names ending in ".localhost" are loopback (RFC 6761); any other name passes
// only if the local hosts table (/etc/hosts) maps it to loopback addresses
// and nothing else. A name that passes is dialled as the literal address the
// table gives, so no resolver ever sees it; connections are made by a dialer
// that refuses a non-loopback address at connect time as well.
//
// With AllowRemote, every destination passes and names are resolved as
// usual. A nil *Guard is the zero Guard: loopback only, the system's hosts
// table. A Guard must not be copied after first use.
type Guard struct {
	// AllowRemote lets every destination through (--allow-remote).
	AllowRemote bool
	// Hosts looks a name up in the local hosts table; nil reads
	// SystemHostsFile (once per Guard).
	Hosts func(name string) []netip.Addr
	// Dial opens a connection to a literal address; nil uses a net.Dialer
	// whose Control refuses non-loopback addresses (unless AllowRemote).
	// Tests set it to record where connections go.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// trusted is an address that passes as it is: one of the run's own
	// containers at its mapped port.
	trusted string

	once  sync.Once
	table map[string][]netip.Addr
}

// Trusting returns a copy of g that also lets hostport through (an address
// a container alias was resolved to: one of the tool's own containers).
func (g *Guard) Trusting(hostport string) *Guard {
	g = guardOrZero(g)
	return &Guard{AllowRemote: g.AllowRemote, Hosts: g.Hosts, Dial: g.Dial, trusted: hostport}
}

// guardOrZero returns g, or a fresh zero Guard when g is nil.
func guardOrZero(g *Guard) *Guard {
	if g == nil {
		return &Guard{}
	}
	return g
}

// lookupHosts returns the hosts table's addresses for name.
func (g *Guard) lookupHosts(name string) []netip.Addr {
	if g.Hosts != nil {
		return g.Hosts(name)
	}
	g.once.Do(func() {
		data, err := os.ReadFile(SystemHostsFile)
		if err == nil {
			g.table = ParseHosts(data)
		}
	})
	return g.table[strings.ToLower(name)]
}

// ParseHosts parses a hosts table (the format of /etc/hosts): each line an
// address followed by names, '#' starting a comment. Names are lowercased;
// unparsable lines are skipped.
func ParseHosts(data []byte) map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		for _, name := range f[1:] {
			name = strings.ToLower(strings.TrimSuffix(name, "."))
			out[name] = append(out[name], a.WithZone(""))
		}
	}
	return out
}

// isLocalhostName reports whether name is "localhost" or under
// ".localhost" (RFC 6761: always loopback).
func isLocalhostName(name string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// splitHost returns hostport's host (hostport may be a bare host, IPv6 in
// brackets or not) and its port ("" when there is none).
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// Resolve checks hostport and returns it with its host replaced by the
// loopback address it stands for (a literal address comes back as written).
// Refusals wrap ErrRemoteTarget. With AllowRemote, hostport comes back
// unchanged.
func (g *Guard) Resolve(hostport string) (string, error) {
	g = guardOrZero(g)
	if g.AllowRemote || (g.trusted != "" && hostport == g.trusted) {
		return hostport, nil
	}
	host, port := splitHost(hostport)
	refuse := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w %s: %s (%s)", ErrRemoteTarget, hostport, fmt.Sprintf(format, args...), remoteHint)
	}
	join := func(a netip.Addr) string {
		if port == "" {
			return a.String()
		}
		return net.JoinHostPort(a.String(), port)
	}
	if host == "" {
		return refuse("no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		switch {
		case a.Unmap().IsLoopback():
			return hostport, nil
		case a.IsUnspecified():
			return refuse("%s is not a loopback address (use 127.0.0.1 or ::1)", host)
		}
		return refuse("%s is not a loopback address", host)
	}
	addrs := g.lookupHosts(strings.TrimSuffix(host, "."))
	if isLocalhostName(host) {
		for _, a := range addrs {
			if a.Unmap().IsLoopback() {
				return join(a.Unmap()), nil
			}
		}
		return join(netip.AddrFrom4([4]byte{127, 0, 0, 1})), nil
	}
	if len(addrs) == 0 {
		return refuse("%s is not a loopback name: only localhost and names the hosts table (%s) maps to loopback addresses are allowed, and onceproof asks no DNS server", host, SystemHostsFile)
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return refuse("the hosts table maps %s to %s, which is not loopback", host, a)
		}
	}
	return join(addrs[0].Unmap()), nil
}

// Check is Resolve without the result.
func (g *Guard) Check(hostport string) error {
	_, err := g.Resolve(hostport)
	return err
}

// CheckTarget checks hostport as a zero Guard (or, with allowRemote, one
// that lets everything through) does: no name leaves the machine, so ctx is
// not used.
func CheckTarget(ctx context.Context, hostport string, allowRemote bool) error {
	return (&Guard{AllowRemote: allowRemote}).Check(hostport)
}

// CheckURL checks the host of an http(s), postgres or redis URL (the
// scheme's default port applied).
func (g *Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: cannot find the host of %q", ErrRemoteTarget, raw)
	}
	return g.Check(HostPort(u))
}

// ResolveURL returns raw with its host replaced as Resolve does.
func (g *Guard) ResolveURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%w: cannot find the host of %q", ErrRemoteTarget, raw)
	}
	hp, err := g.Resolve(u.Host)
	if err != nil {
		return "", err
	}
	u.Host = hp
	return u.String(), nil
}

// HostPort is a URL's host:port, the scheme's default port applied (80,
// 443, 5432 for PostgreSQL, 6379 for Redis).
func HostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	switch u.Scheme {
	case "https":
		port = "443"
	case "postgres", "postgresql":
		port = "5432"
	case "redis", "rediss":
		port = "6379"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// DialContext connects to addr after checking it: a name is replaced by the
// loopback address the hosts table gives, so the dialer sees only literal
// addresses. Unix sockets are local and pass.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	g = guardOrZero(g)
	if strings.HasPrefix(network, "unix") {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	lit, err := g.Resolve(addr)
	if err != nil {
		return nil, err
	}
	if g.Dial != nil {
		return g.Dial(ctx, network, lit)
	}
	d := &net.Dialer{}
	if !g.AllowRemote && addr != g.trusted {
		d.Control = LoopbackOnly
	}
	return d.DialContext(ctx, network, lit)
}

// lookupFunc resolves host through the guard, for pgx (its LookupFunc): a
// literal loopback address, or the one the hosts table gives a loopback
// name. It asks DNS only with AllowRemote.
// LookupHost resolves host as the guard allows (loopback names from the
// hosts table, a trusted address, or any with AllowRemote), for libraries
// that resolve names themselves (pgx).
func (g *Guard) LookupHost(ctx context.Context, host string) ([]string, error) {
	g = guardOrZero(g)
	if g.AllowRemote {
		return net.DefaultResolver.LookupHost(ctx, host)
	}
	if g.trusted != "" {
		if h, _ := splitHost(g.trusted); h == host {
			return []string{host}, nil
		}
	}
	lit, err := g.Resolve(host)
	if err != nil {
		return nil, err
	}
	return []string{lit}, nil
}

// LoopbackOnly is a net.Dialer Control function: it refuses a connection to
// a non-loopback address at connect time.
func LoopbackOnly(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w %s: not an address (%s)", ErrRemoteTarget, address, remoteHint)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("%w %s: %s is not a loopback address (%s)", ErrRemoteTarget, address, ap.Addr(), remoteHint)
	}
	return nil
}

// maxRedirects bounds the redirects a guarded HTTP client follows.
const maxRedirects = 10

// HTTPClient returns an HTTP client whose every connection goes through the
// guard, redirects included (each redirect's target is checked before it is
// followed), that uses no HTTP proxy from the environment and keeps no idle
// connections. timeout bounds each request (0: none beyond the context's).
func (g *Guard) HTTPClient(timeout time.Duration) *http.Client {
	g = guardOrZero(g)
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         g.DialContext,
			DisableKeepAlives:   true,
			TLSHandshakeTimeout: 10 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if err := g.Check(HostPort(req.URL)); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
}
