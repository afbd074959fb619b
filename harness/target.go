package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// ErrRemoteTarget marks a tool or oracle address that is not loopback.
var ErrRemoteTarget = errors.New("remote target")

// lookupNetIP resolves names for CheckTarget; tests replace it so that
// they never reach a DNS server.
var lookupNetIP = net.DefaultResolver.LookupNetIP

// remoteHint ends every refusal: why, and what to do about it.
const remoteHint = "onceproof duplicates writes on purpose, so it only targets loopback unless remote targets are explicitly allowed"

// CheckTarget returns an error wrapping ErrRemoteTarget unless hostport's
// host is loopback (127.0.0.0/8, ::1, "localhost"), or allowRemote is true.
// Hostnames other than localhost are resolved (net.DefaultResolver with ctx)
// and allowed only if every address is loopback; a name that cannot be
// resolved is refused. hostport may also be a bare host.
func CheckTarget(ctx context.Context, hostport string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s (%s)", ErrRemoteTarget, hostport, fmt.Sprintf(format, args...), remoteHint)
	}
	if host == "" {
		return refuse("no host")
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return nil
	}
	// Container addresses (a later issue) would be allowed here too: the
	// address of a container the harness itself started is as disposable as
	// loopback.
	if a, err := netip.ParseAddr(host); err == nil {
		switch {
		case a.Unmap().IsLoopback():
			return nil
		case a.IsUnspecified():
			return refuse("%s is not a loopback address (use 127.0.0.1 or ::1)", host)
		}
		return refuse("%s is not a loopback address", host)
	}
	addrs, err := lookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w %s: cannot resolve %s to check that it is loopback: %w (%s)", ErrRemoteTarget, hostport, host, err, remoteHint)
	}
	if len(addrs) == 0 {
		return refuse("%s resolves to no address", host)
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return refuse("%s resolves to %s, which is not loopback", host, a)
		}
	}
	return nil
}

// CheckTargets checks the tool's endpoint and, for an http oracle, the
// oracle URL's host (rendered with a dummy marker). Errors are
// [*SpecError]s naming file, line and field, wrapping ErrRemoteTarget (not
// ErrSpec); several are joined with [errors.Join].
func (t ToolSpec) CheckTargets(ctx context.Context, file string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	var errs []error
	check := func(field, rawURL string) {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" {
			e := t.locate(file, field, fmt.Sprintf("%v: cannot find the host of %q", ErrRemoteTarget, rawURL))
			e.Kind = ErrRemoteTarget
			errs = append(errs, e)
			return
		}
		if t.isContainerAddr(hostPort(u)) {
			return // one of the tool's own containers
		}
		if err := CheckTarget(ctx, hostPort(u), false); err != nil {
			e := t.locate(file, field, err.Error())
			e.Kind = ErrRemoteTarget
			errs = append(errs, e)
		}
	}
	if t.MCP != nil {
		check("mcp.url", t.MCP.URL)
	} else {
		check("http.url", t.HTTP.URL)
	}
	if o := httpOracleOf(t.HTTP.Oracle); o != nil {
		raw, err := o.URL.Render(Operation{Marker: "onceproof-target-check"})
		if err != nil {
			raw = o.URL.String()
		}
		check("oracle.http.url", raw)
	}
	if o := storeOracleURL(t.HTTP.Oracle); o != "" {
		check("oracle", o)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// httpOracleOf returns the HTTPOracle o is or wraps (through Settled), or
// nil.
func httpOracleOf(o Oracle) *HTTPOracle {
	for range 10 {
		switch x := o.(type) {
		case *HTTPOracle:
			return x
		case *settled:
			o = x.o
		default:
			return nil
		}
	}
	return nil
}

// storeOracleURL is the DSN or URL of a SQL or Redis oracle o is or wraps.
func storeOracleURL(o Oracle) string {
	if s, ok := o.(*settled); ok {
		o = s.o
	}
	switch x := o.(type) {
	case *SQLOracle:
		return x.DSN
	case *RedisOracle:
		return x.URL
	}
	return ""
}
