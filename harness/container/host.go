package container

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go/wait"
)

// PublishedHost is where this process reaches the ports the Docker engine
// publishes for the containers it starts, and why it is there.
type PublishedHost struct {
	Addr   string // a host name or IP address
	Reason string
}

// localEngine is the reason of the usual case, a local engine outside any
// container.
const localEngine = "a local Docker engine"

// hostFacts are what the choice of PublishedHost depends on.
type hostFacts struct {
	override    *string // TESTCONTAINERS_HOST_OVERRIDE, when set
	daemon      string  // the engine's URL: unix:///var/run/docker.sock, tcp://host:2376
	inContainer bool    // this process runs in a container (/.dockerenv, /run/.containerenv)
	bridge      string  // the engine's default bridge interface, e.g. docker0
	gateway     string  // the default bridge network's gateway, "" when the engine does not say
	local       map[string][]netip.Addr
	route       string // the default route's gateway, "" when none
}

// choosePublishedHost decides where published ports are reached, the way
// testcontainers-go's DockerProvider.DaemonHost does — the override, a
// tcp:// engine's host, localhost for a local socket, and from inside a
// container the default bridge network's gateway, else the default route —
// with one case before the gateway: a Docker engine that runs in this
// process's own network namespace (its bridge interface, or its gateway
// address, is one of ours: an engine started inside this container, or a
// container on the host's network) publishes its ports on loopback, where
// the gateway of another namespace is unreachable.
func choosePublishedHost(f hostFacts) (PublishedHost, error) {
	if f.override != nil {
		return PublishedHost{*f.override, "TESTCONTAINERS_HOST_OVERRIDE"}, nil
	}
	u, err := url.Parse(f.daemon)
	if err != nil {
		return PublishedHost{}, fmt.Errorf("docker host %q: %w", f.daemon, err)
	}
	switch u.Scheme {
	case "tcp", "http", "https":
		return PublishedHost{u.Hostname(), "the Docker engine's host (" + f.daemon + ")"}, nil
	case "unix", "npipe":
	default:
		return PublishedHost{}, fmt.Errorf("docker host %q: cannot tell where it publishes ports (set TESTCONTAINERS_HOST_OVERRIDE)", f.daemon)
	}
	if !f.inContainer {
		return PublishedHost{"localhost", localEngine}, nil
	}
	if _, ok := f.local[f.bridge]; ok && f.bridge != "" {
		return PublishedHost{"127.0.0.1", "inside a container whose network namespace holds the Docker engine's bridge " + f.bridge + ": ports are published on loopback"}, nil
	}
	if gw, err := netip.ParseAddr(f.gateway); err == nil {
		for _, addrs := range f.local {
			for _, a := range addrs {
				if a == gw {
					return PublishedHost{"127.0.0.1", "inside a container that holds the Docker engine's gateway " + f.gateway + ": ports are published on loopback"}, nil
				}
			}
		}
		return PublishedHost{f.gateway, "inside a container: the Docker bridge network's gateway"}, nil
	}
	if f.route != "" {
		return PublishedHost{f.route, "inside a container: the default route's gateway"}, nil
	}
	return PublishedHost{"localhost", "inside a container with no gateway found"}, nil
}

// DetectPublishedHost finds where this process reaches the ports docker
// publishes (see choosePublishedHost): no TESTCONTAINERS_HOST_OVERRIDE is
// needed inside a container.
func DetectPublishedHost(ctx context.Context, docker client.APIClient) (PublishedHost, error) {
	f := hostFacts{daemon: docker.DaemonHost(), bridge: "docker0"}
	if v, ok := os.LookupEnv("TESTCONTAINERS_HOST_OVERRIDE"); ok {
		f.override = &v
		return choosePublishedHost(f)
	}
	for _, p := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(p); err == nil {
			f.inContainer = true
		}
	}
	if f.inContainer {
		if nw, err := docker.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{}); err == nil {
			if name := nw.Network.Options["com.docker.network.bridge.name"]; name != "" {
				f.bridge = name
			}
			for _, c := range nw.Network.IPAM.Config {
				if c.Gateway.IsValid() {
					f.gateway = c.Gateway.String()
					break
				}
			}
		}
		f.local = localAddrs()
		if r, err := os.Open("/proc/net/route"); err == nil {
			f.route, _ = defaultRoute(r)
			r.Close()
		}
	}
	return choosePublishedHost(f)
}

// localAddrs lists this network namespace's interfaces and their
// addresses.
func localAddrs() map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	ifs, err := net.Interfaces()
	if err != nil {
		return out
	}
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		list := []netip.Addr{}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				list = append(list, p.Addr())
			}
		}
		out[i.Name] = list
	}
	return out
}

// defaultRoute reads the default route's gateway from /proc/net/route
// (no ip command needed: an image may have no shell).
func defaultRoute(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[1] != "00000000" || f[2] == "Gateway" {
			continue
		}
		b, err := hex.DecodeString(f[2])
		if err != nil || len(b) != 4 {
			continue
		}
		var ip [4]byte
		binary.LittleEndian.PutUint32(ip[:], binary.BigEndian.Uint32(b))
		if gw := netip.AddrFrom4(ip); !gw.IsUnspecified() {
			return gw.String(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no default route")
}

// onHost makes a wait strategy reach the container at host (the detected
// PublishedHost) rather than where testcontainers-go's own detection puts
// it.
func onHost(s wait.Strategy, host string) wait.Strategy { return hostStrategy{s, host} }

type hostStrategy struct {
	wait.Strategy
	host string
}

func (s hostStrategy) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	return s.Strategy.WaitUntilReady(ctx, hostTarget{target, s.host})
}

// hostTarget is a wait target whose Host is the detected one.
type hostTarget struct {
	wait.StrategyTarget
	host string
}

func (t hostTarget) Host(context.Context) (string, error) { return t.host, nil }

var _ wait.StrategyTarget = hostTarget{}
