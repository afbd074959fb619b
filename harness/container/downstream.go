package container

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/moby/moby/client"

	"github.com/onceproof/onceproof/harness"
)

// startDownstream starts the endpoint that plays the tool's dependency, if
// it has one, on the gateway address of the environment's network: the
// tool containers reach it there, and it admits connections only from the
// network and from loopback. The Docker engine must run on this host (its
// bridge is then one of this host's interfaces).
func (e *Env) startDownstream(ctx context.Context) error {
	if e.spec.Downstream == nil {
		return nil
	}
	spec := e.spec.Downstream.WithDefaults()
	res, err := e.docker.NetworkInspect(ctx, e.net.ID, client.NetworkInspectOptions{})
	if err != nil {
		return fmt.Errorf("%w %s: inspect the network: %w", harness.ErrDownstream, spec.Name, err)
	}
	var gw netip.Addr
	var subnet netip.Prefix
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.Is4() && c.Subnet.IsValid() {
			gw, subnet = c.Gateway, c.Subnet
			break
		}
	}
	if !gw.IsValid() {
		return fmt.Errorf("%w %s: the container network has no IPv4 gateway to listen on", harness.ErrDownstream, spec.Name)
	}
	d, err := harness.ListenDownstream(spec, net.JoinHostPort(gw.String(), "0"), func(a netip.Addr) bool {
		return a.IsLoopback() || subnet.Contains(a)
	})
	if err != nil {
		return fmt.Errorf("%w (the tool containers reach onceproof at their network's gateway, so the Docker engine must run on this host)", err)
	}
	e.downstream = d
	e.logf("downstream %s at %s (given to the tool as %s)", spec.Name, d.URL(), spec.Env)
	return nil
}

// Downstream is the endpoint playing the tool's dependency (nil when the
// spec has none).
func (e *Env) Downstream() *harness.Downstream { return e.downstream }
