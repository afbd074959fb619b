package container

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChoosePublishedHost(t *testing.T) {
	s := func(v string) *string { return &v }
	addrs := func(a ...string) []netip.Addr {
		var out []netip.Addr
		for _, x := range a {
			out = append(out, netip.MustParseAddr(x))
		}
		return out
	}
	sibling := map[string][]netip.Addr{"lo": addrs("127.0.0.1"), "eth0": addrs("172.17.0.5")}
	for _, tc := range []struct {
		facts  hostFacts
		want   string
		reason string
	}{
		{hostFacts{override: s("10.0.0.9"), daemon: "unix:///var/run/docker.sock", inContainer: true}, "10.0.0.9", "TESTCONTAINERS_HOST_OVERRIDE wins, as in testcontainers-go"},
		{hostFacts{override: s(""), daemon: "tcp://192.0.2.7:2376"}, "", "an override set to nothing is still the override"},
		{hostFacts{daemon: "tcp://192.0.2.7:2376", inContainer: true}, "192.0.2.7", "a remote engine publishes on its host"},
		{hostFacts{daemon: "unix:///var/run/docker.sock"}, "localhost", "a local engine outside any container"},
		{hostFacts{daemon: "unix:///var/run/docker.sock", inContainer: true, bridge: "docker0", gateway: "172.17.0.1",
			local: map[string][]netip.Addr{"lo": addrs("127.0.0.1"), "docker0": addrs("172.17.0.1")}}, "127.0.0.1", "the engine runs in this container (its bridge is here)"},
		{hostFacts{daemon: "unix:///var/run/docker.sock", inContainer: true, bridge: "docker0", gateway: "", route: "192.0.2.1",
			local: map[string][]netip.Addr{"eth0": addrs("192.0.2.2"), "docker0": addrs("172.17.0.1")}}, "127.0.0.1", "this machine: an engine without a gateway in its bridge network, started in this container (testcontainers-go picks the default route, which is not the engine)"},
		{hostFacts{daemon: "unix:///var/run/docker.sock", inContainer: true, bridge: "br-x", gateway: "172.18.0.1",
			local: map[string][]netip.Addr{"eth0": addrs("172.18.0.1")}}, "127.0.0.1", "the engine's gateway address is ours (a container on the host's network)"},
		{hostFacts{daemon: "unix:///var/run/docker.sock", inContainer: true, bridge: "docker0", gateway: "172.17.0.1", local: sibling, route: "172.17.0.1"}, "172.17.0.1", "a sibling container with the socket mounted reaches the bridge's gateway"},
		{hostFacts{daemon: "unix:///var/run/docker.sock", inContainer: true, bridge: "docker0", local: sibling, route: "172.17.0.1"}, "172.17.0.1", "no gateway in the network: the default route"},
		{hostFacts{daemon: "unix:///var/run/docker.sock", inContainer: true, bridge: "docker0", local: sibling}, "localhost", "nothing else to go by"},
	} {
		got, err := choosePublishedHost(tc.facts)
		require.NoError(t, err, tc.reason)
		assert.Equal(t, tc.want, got.Addr, tc.reason)
		assert.NotEmpty(t, got.Reason, tc.reason)
	}
	_, err := choosePublishedHost(hostFacts{daemon: "ssh://me@box"})
	require.ErrorContains(t, err, "TESTCONTAINERS_HOST_OVERRIDE")
}

func TestDefaultRoute(t *testing.T) {
	const table = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
		"eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
	gw, err := defaultRoute(strings.NewReader(table))
	require.NoError(t, err)
	assert.Equal(t, "192.0.2.1", gw)
	_, err = defaultRoute(strings.NewReader("Iface\tDestination\tGateway\n"))
	assert.Error(t, err)
}

func TestLocalImageVersions(t *testing.T) {
	l := LocalImages{Map: DefaultLocalImages(), Explicit: map[string]bool{}}
	for _, tc := range []struct {
		image, local, note string
		err                bool
		reason             string
	}{
		{"postgres:15", "onceproof/postgres:15", "", false, "the same major version"},
		{"postgres:15.6-alpine", "onceproof/postgres:15", "", false, "a minor version and a variant of it"},
		{"postgres:16", "", "", true, "another major version is refused"},
		{"docker.io/library/postgres:16", "", "", true, "however it is spelt"},
		{"postgres", "onceproof/postgres:15", "no version asked; the local build is 15", false, "no tag: named in the output"},
		{"redis:7", "onceproof/redis:7", "", false, "redis 7"},
		{"redis:6.2", "", "", true, "redis 6 is not 7"},
		{"ghcr.io/shopify/toxiproxy:2.5.0", "onceproof/toxiproxy:dev", "", false, "a local build without a version"},
		{"ghcr.io/acme/tool:1.2", "ghcr.io/acme/tool:1.2", "", false, "an image without a substitute runs as itself"},
	} {
		s, err := l.resolve(tc.image)
		if tc.err {
			require.ErrorIs(t, err, ErrImageVersion, tc.reason)
			assert.Contains(t, err.Error(), "--image "+repository(tc.image)+"=", tc.reason)
			continue
		}
		require.NoError(t, err, tc.reason)
		assert.Equal(t, tc.local, s.Local, tc.reason)
		assert.Equal(t, tc.note, s.Note, tc.reason)
	}
	l.Explicit["postgres"] = true
	s, err := l.resolve("postgres:16")
	require.NoError(t, err, "a substitute the user chose runs")
	assert.Equal(t, "onceproof/postgres:15", s.Local)
	assert.Contains(t, s.Note, "another major version (16 asked, 15 local)")
}
