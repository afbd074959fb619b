package harness

import (
	"errors"
	"fmt"
	"net/url"
)

// CheckTargets checks with g (see [Guard]) the tool's endpoint and its
// oracle's address (an http oracle's URL rendered with a dummy marker, a SQL
// or Redis oracle's DSN); the aliases of the tool's own containers pass.
// No name is sent to DNS. Errors are [*SpecError]s naming file, line and
// field, wrapping ErrRemoteTarget (not ErrSpec); several are joined with
// [errors.Join].
func (t ToolSpec) CheckTargets(g *Guard, file string) error {
	if g != nil && g.AllowRemote {
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
		if t.isContainerAddr(urlHostPort(u)) {
			return // one of the tool's own containers
		}
		if err := g.Check(urlHostPort(u)); err != nil {
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
	if field, o := storeOracleURL(t.HTTP.Oracle); o != "" {
		check(field, o)
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

// storeOracleURL is the DSN or URL of a SQL or Redis oracle o is or wraps,
// and its field in a spec.
func storeOracleURL(o Oracle) (field, url string) {
	if s, ok := o.(*settled); ok {
		o = s.o
	}
	switch x := o.(type) {
	case *SQLOracle:
		return "oracle.sql.dsn", x.DSN
	case *RedisOracle:
		return "oracle.redis.url", x.URL
	}
	return "", ""
}
