package spec

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/onceproof/onceproof/harness"
)

// CheckTargets checks with g (see [Guard]) the tool's endpoint and its
// oracle's address (an http oracle's URL rendered with a dummy marker, a SQL
// or Redis oracle's DSN); the aliases of the tool's own containers pass.
// No name is sent to DNS. Errors are [*Error]s naming file, line and
// field, wrapping ErrRemoteTarget (not ErrSpec); several are joined with
// [errors.Join].
func (t Tool) CheckTargets(g *harness.Guard, file string) error {
	if g != nil && g.AllowRemote {
		return nil
	}
	t = t.resolved()
	var errs []error
	check := func(field, rawURL string) {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" {
			e := t.locate(file, field, fmt.Sprintf("%v: cannot find the host of %q", harness.ErrRemoteTarget, rawURL))
			e.Kind = harness.ErrRemoteTarget
			errs = append(errs, e)
			return
		}
		if t.isContainerAddr(harness.HostPort(u)) {
			return // one of the tool's own containers
		}
		if err := g.Check(harness.HostPort(u)); err != nil {
			e := t.locate(file, field, err.Error())
			e.Kind = harness.ErrRemoteTarget
			errs = append(errs, e)
		}
	}
	for _, target := range t.Config.Targets() {
		check(target.Field, target.URL)
	}
	for _, target := range harness.OracleTargets(t.Common.Oracle) {
		check(target.Field, target.URL)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
